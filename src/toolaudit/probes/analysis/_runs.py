"""Score-level diagnostics of a probe study: VRG, MSR, MTR, PTD, rescoring, controls.

Definitions (the seed's §2.2 and Appendix A). A *pair* is an original run and a mutated
run of the same task, policy and seed label.

* VRG = mean over pairs of (original score − mutated score); positive = the mutation
  lowers the score. Each run is scored under its own condition.
* VRG rescored = the same with the mutated trajectory mapped back to canonical names
  and presentation and scored under the original rule (counterfactual rescoring).
* MSR = fraction of mutated runs that pass. MTR = the same over pairs whose original run
  passed; undefined (null, not zero) when no original run passes.
* PTD (proxy tasks only) = per task, max visible proxy reward minus max true quality
  over the cell's runs, averaged over the proxy tasks; other tasks are excluded.
* behaviour changed = the canonical action sequences (names mapped back, arguments
  compared) of the pair differ.

Intervals resample whole tasks (task-cluster bootstrap); Δ = mutated − original is
judged against ±margin on its 90% interval (TOST), and again with Bonferroni and Holm
corrections across the family of mutated cells; exact McNemar on pass/fail pairs, with
Holm and Bonferroni corrections across the same family.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from toolaudit.probes._mutations import MUTATED, action_sequence
from toolaudit.probes._seam import RecordReader
from toolaudit.probes.agents._researchops import POLICIES
from toolaudit.probes.analysis._stats import cluster_mean_replicates, corrected_equivalence
from toolaudit.stats import (
    Interval,
    bonferroni,
    cluster_mean_bootstrap,
    equivalence_verdict,
    holm,
    mcnemar_exact,
)
from toolaudit.traces import Episode

# Probes whose gap a gap-only leaderboard would read as robustness (not the controls).
PROBES = ("tool_rename", "reformat", "rubric_change", "incentive_change")


@dataclass(frozen=True, slots=True)
class Run:
    """One record reduced to what the analyses need."""

    task: str
    policy: str
    condition: str
    seed: int
    reward: float
    rescored: float
    passed: bool
    quality: float
    proxy: float | None
    proxy_task: bool
    actions: tuple[str, ...]
    calls: int
    hack_risk: float = 0.0


def runs_of(episodes: Sequence[Episode], reader_of: Callable[[Episode], RecordReader]) -> list[Run]:
    """Rescore every record after mapping it back to canonical terms, through the reader
    ``reader_of`` gives for it (the study layer passes the harnesses' registry:
    :func:`toolaudit.probes.reduce_records`), so the analysis never imports a harness."""
    runs = []
    for ep in episodes:
        reader = reader_of(ep)
        canon = reader.canonical(ep)
        rescored = reader.rescore(ep)
        src = ep.source
        quality = src.get("true_quality")
        runs.append(
            Run(
                task=ep.task_id,
                policy=str(src["policy"]),
                condition=ep.condition,
                seed=ep.trial,
                reward=float(ep.reward if ep.reward is not None else float("nan")),
                rescored=rescored,
                passed=bool(src["passed"]),
                quality=float(quality) if quality is not None else float("nan"),
                proxy=src.get("proxy_reward"),
                proxy_task=bool(src.get("proxy_task")),
                actions=tuple(action_sequence(canon)),
                calls=len(ep.tool_calls()),
                hack_risk=float((ep.reward_components or {}).get("hack_risk", 0.0)),
            )
        )
    return runs


def _quality(runs: Sequence[Run]) -> float | None:
    """Mean simulator-defined quality; None where a harness has none (Inspect tasks)."""
    values = [r.quality for r in runs]
    return float(np.mean(values)) if values and not np.isnan(values).any() else None


def _iv(interval: Interval) -> list[float]:
    return [interval.low, interval.high]


def _boot(
    clusters: Sequence[str], values: np.ndarray, *, level: float, seed: int, n_boot: int
) -> Interval:
    return cluster_mean_bootstrap(clusters, values, n_boot=n_boot, level=level, seed=seed)


def ptd_by_task(runs: Sequence[Run]) -> dict[str, float]:
    """Per proxy task: max visible proxy reward − max true quality over ``runs``."""
    proxy: dict[str, list[float]] = defaultdict(list)
    quality: dict[str, list[float]] = defaultdict(list)
    for r in runs:
        if r.proxy_task and r.proxy is not None:
            proxy[r.task].append(r.proxy)
            quality[r.task].append(r.quality)
    return {t: max(proxy[t]) - max(quality[t]) for t in sorted(proxy)}


def _pairs(runs: Sequence[Run]) -> dict[tuple[str, str], dict[tuple[str, int], Run]]:
    out: dict[tuple[str, str], dict[tuple[str, int], Run]] = defaultdict(dict)
    for r in runs:
        out[(r.policy, r.condition)][(r.task, r.seed)] = r
    return out


def scored(run: Run, *, rescored: bool = False) -> bool:
    """Whether a run has a score (and, with ``rescored``, a rescored score): a run that
    errored or that the benchmark's evaluator could not score has none."""
    return bool(np.isfinite(run.reward)) and (not rescored or bool(np.isfinite(run.rescored)))


def _cell(
    policy: str,
    condition: str,
    orig: dict[tuple[str, int], Run],
    mut: dict[tuple[str, int], Run],
    *,
    margin: float,
    seed: int,
    n_boot: int,
) -> dict[str, Any] | None:
    paired = sorted(set(orig) & set(mut))
    keys = [k for k in paired if scored(orig[k]) and scored(mut[k], rescored=True)]
    if not keys:
        return None
    o = [orig[k] for k in keys]
    m = [mut[k] for k in keys]
    clusters = [k[0] for k in keys]
    ro = np.array([r.reward for r in o])
    rm = np.array([r.reward for r in m])
    rs = np.array([r.rescored for r in m])
    po = np.array([r.passed for r in o])
    pm = np.array([r.passed for r in m])
    gap = ro - rm
    gap_rs = ro - rs
    mtr_vals = np.where(po, pm.astype(float), np.nan)
    b = int((po & ~pm).sum())
    c = int((~po & pm).sum())
    ptd = ptd_by_task(m)
    ptd_vals = np.array(list(ptd.values()))
    kw = {"seed": seed, "n_boot": n_boot}
    delta_reps = cluster_mean_replicates(clusters, rm - ro, n_boot=n_boot, seed=seed)
    delta90 = delta_reps.interval(0.90)
    cell = {
        "_delta_reps": delta_reps,
        "policy": policy,
        "condition": condition,
        "n_pairs": len(keys),
        "n_unpaired": len(set(orig) ^ set(mut)),
        "vrg": float(gap.mean()),
        "vrg_ci95": _iv(_boot(clusters, gap, level=0.95, **kw)),
        "vrg_rescored": float(gap_rs.mean()),
        "vrg_rescored_ci95": _iv(_boot(clusters, gap_rs, level=0.95, **kw)),
        "msr": float(pm.mean()),
        "msr_ci95": _iv(_boot(clusters, pm.astype(float), level=0.95, **kw)),
        "mtr": float(np.nanmean(mtr_vals)) if po.any() else None,
        "n_original_pass": int(po.sum()),
        "ptd": float(ptd_vals.mean()) if ptd_vals.size else None,
        "ptd_ci95": _iv(_boot(list(ptd), ptd_vals, level=0.95, **kw)) if ptd_vals.size else None,
        "n_proxy_tasks": int(ptd_vals.size),
        "pass_rate_original": float(po.mean()),
        "pass_rate_mutated": float(pm.mean()),
        "reward_original": float(ro.mean()),
        "reward_mutated": float(rm.mean()),
        "quality_original": _quality(o),
        "quality_mutated": _quality(m),
        "behavior_changed_rate": float(
            np.mean([a.actions != b_.actions for a, b_ in zip(o, m, strict=True)])
        ),
        "flip_rate": float((po != pm).mean()),
        "flip_rate_ci95": _iv(_boot(clusters, (po != pm).astype(float), level=0.95, **kw)),
        "delta": float((rm - ro).mean()),
        "delta_ci90": _iv(delta90),
        "equivalence": equivalence_verdict(delta90, margin=margin).verdict,
        "mcnemar_b": b,
        "mcnemar_c": c,
        "mcnemar_p": mcnemar_exact(b, c),
        "mean_calls_mutated": float(np.mean([r.calls for r in m])),
        "hack_detection_rate": float(np.mean([r.hack_risk > 0 for r in m])),
    }
    if len(keys) < len(paired):  # only where runs were left out (older results unchanged)
        cell["n_not_scored"] = len(paired) - len(keys)
    return cell


def analyze_runs(
    runs: Sequence[Run], *, margin: float = 0.10, seed: int = 0, n_boot: int = 2000
) -> dict[str, Any]:
    """Every cell (policy × mutated condition), the policy summary and the repeat control."""
    pairs = _pairs(runs)
    policies = [p for p in POLICIES if (p, "original") in pairs]
    policies += sorted({p for p, _ in pairs} - set(policies))
    cells: list[dict[str, Any]] = []
    not_scored: list[dict[str, Any]] = []
    effects: list[dict[str, Any]] = []
    for p in policies:
        orig = pairs.get((p, "original"), {})
        base = [r for r in orig.values() if scored(r)]
        ptd0 = ptd_by_task(base)
        cells.append(
            {
                "policy": p,
                "condition": "original",
                "n_pairs": len(base),
                "vrg": None,
                "vrg_rescored": None,
                "msr": None,
                "mtr": None,
                "ptd": float(np.mean(list(ptd0.values()))) if ptd0 else None,
                "ptd_ci95": _iv(
                    _boot(
                        list(ptd0),
                        np.array(list(ptd0.values())),
                        level=0.95,
                        seed=seed,
                        n_boot=n_boot,
                    )
                )
                if ptd0
                else None,
                "n_proxy_tasks": len(ptd0),
                "pass_rate_original": float(np.mean([r.passed for r in base])) if base else None,
                "reward_original": float(np.mean([r.reward for r in base])) if base else None,
                "quality_original": _quality(base),
                "behavior_changed_rate": None,
                "mean_calls_mutated": float(np.mean([r.calls for r in base])) if base else None,
            }
        )
        if len(base) < len(orig):
            cells[-1]["n_not_scored"] = len(orig) - len(base)
        for cond in MUTATED:
            if (p, cond) in pairs and orig:
                effect = _evaluation_effect(p, cond, orig, pairs[(p, cond)])
                if effect is not None:
                    effects.append(effect)
                cell = _cell(p, cond, orig, pairs[(p, cond)], margin=margin, seed=seed,
                             n_boot=n_boot)  # fmt: skip
                if cell is None:
                    not_scored.append({"policy": p, "condition": cond,
                                       "n_runs": len(pairs[(p, cond)])})  # fmt: skip
                else:
                    cells.append(cell)
    tested = [c for c in cells if c["condition"] != "original"]
    pvalues = [float(c["mcnemar_p"]) for c in tested]
    for c, ph, pb in zip(tested, holm(pvalues), bonferroni(pvalues), strict=True):
        c["mcnemar_p_holm"] = ph
        c["mcnemar_p_bonferroni"] = pb
    # Equivalence at ±margin, corrected across the family of every mutated cell.
    corrected = corrected_equivalence([c.pop("_delta_reps") for c in tested], margin=margin)
    for c, eq in zip(tested, corrected, strict=True):
        c["tost_p"] = eq["tost_p"]
        c["equivalence_bonferroni"] = eq["equivalence_bonferroni"]
        c["delta_ci_bonferroni"] = eq["delta_ci_bonferroni"]
        c["equivalence_holm"] = eq["equivalence_holm"]
        c["equivalence_family_size"] = eq["family_size"]
    out: dict[str, Any] = {
        "cells": cells,
        "policies": policy_summary(cells),
        "repeat_control": repeat_control(cells),
    }
    if not_scored:  # cells with no scored pair (every run errored or was unscorable)
        out["cells_not_scored"] = not_scored
    if effects:  # only where a condition fails to score more runs than its original
        out["evaluation_effects"] = effects
    return out


def _evaluation_effect(
    policy: str,
    condition: str,
    orig: dict[tuple[str, int], Run],
    mut: dict[tuple[str, int], Run],
) -> dict[str, Any] | None:
    """A cell whose mutated runs error (or cannot be scored) more often than the same
    tasks' original runs: the mutation broke the evaluation, not (only) the agent, so its
    gap is computed on the runs that survived. None when it does not."""
    paired = sorted(set(orig) & set(mut))
    a = sum(not scored(orig[k]) for k in paired)
    b = sum(not scored(mut[k]) for k in paired)
    if b <= a:
        return None
    return {"policy": policy, "condition": condition, "n_pairs": len(paired),
            "not_scored_original": a, "not_scored_mutated": b}  # fmt: skip


def policy_summary(cells: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per policy: mean gap and MSR over the probes, and the gap-only vs MSR rankings."""
    rows = []
    for p in dict.fromkeys(c["policy"] for c in cells):
        probe = [c for c in cells if c["policy"] == p and c["condition"] in PROBES]
        if not probe:
            continue
        rows.append(
            {
                "policy": p,
                "mean_vrg": float(np.mean([c["vrg"] for c in probe])),
                "mean_abs_vrg": float(np.mean([abs(c["vrg"]) for c in probe])),
                "mean_vrg_rescored": float(np.mean([c["vrg_rescored"] for c in probe])),
                "mean_msr": float(np.mean([c["msr"] for c in probe])),
            }
        )
    by_gap = sorted(rows, key=lambda r: (r["mean_abs_vrg"], r["policy"]))
    by_msr = sorted(rows, key=lambda r: (-r["mean_msr"], r["policy"]))
    for r in rows:
        r["gap_only_rank"] = by_gap.index(r) + 1
        r["msr_rank"] = by_msr.index(r) + 1
    for r in rows:
        # A small gap with no passing mutated run: a gap-only leaderboard calls it robust,
        # ranking it above a policy whose mutated runs do pass (so a lone policy, or one
        # ranked only above policies that never pass either, is not misranked).
        r["misranked_by_gap"] = (
            r["mean_msr"] == 0.0
            and r["gap_only_rank"] <= len(rows) // 2 + 1
            and any(q["mean_msr"] > 0 and q["gap_only_rank"] > r["gap_only_rank"] for q in rows)
        )
    return rows


def repeat_control(cells: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per policy: pass flips between identical reruns against flips under each change."""
    out = []
    for p in dict.fromkeys(c["policy"] for c in cells):
        rep = next((c for c in cells if c["policy"] == p and c["condition"] == "repeat"), None)
        if rep is None:
            continue
        changed = {
            c["condition"]: c["flip_rate"]
            for c in cells
            if c["policy"] == p and c["condition"] not in ("original", "repeat")
        }
        out.append(
            {
                "policy": p,
                "repeat_flip_rate": rep["flip_rate"],
                "repeat_flip_rate_ci95": rep["flip_rate_ci95"],
                "n_pairs": rep["n_pairs"],
                "changed_flip_rate": changed,
                "exceeds_repeat": {k: v > rep["flip_rate_ci95"][1] for k, v in changed.items()},
            }
        )
    return out

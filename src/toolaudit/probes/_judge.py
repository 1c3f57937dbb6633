"""Judge audit from verdict records (judge × view × repeat × record).

Within-judge flips across views (the same fixed trajectory presented differently) are
compared with flips across identical repeats (byte-identical payloads sent again);
between-judge disagreement, agreement with native reward and Cohen's κ describe how
the judges relate to each other and to the benchmark's own reward. Native reward is a
reference, not ground truth: these are consistency and agreement measures, not accuracy.

A deterministic, seeded simulated-judge generator (:func:`simulate_verdicts`) produces
verdict records for the controlled suite so that the audit runs in the demo; real
verdicts are read from JSONL (:func:`read_verdicts`).
"""

from __future__ import annotations

import hashlib
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from itertools import combinations
from pathlib import Path
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict

from toolaudit.errors import DataError
from toolaudit.probes._analysis import Run
from toolaudit.stats import cluster_mean_bootstrap, cohen_kappa
from toolaudit.traces import read_jsonl

Verdict = Literal["pass", "fail", "insufficient"]


class VerdictRecord(BaseModel):
    """One judge call: a verdict on one record under one view and repeat index."""

    model_config = ConfigDict(extra="forbid")

    schema_version: int = 1
    judge: str
    view: str
    repeat: int
    record_id: str
    verdict: Verdict
    native_reward: float | None = None


def read_verdicts(path: str | Path) -> list[VerdictRecord]:
    """Read verdict records from JSONL (errors name the file, line and field)."""
    return list(read_jsonl(path, VerdictRecord))


def _unit(*parts: object) -> float:
    digest = hashlib.sha256("|".join(map(str, parts)).encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def _procedure_ok(run: Run) -> bool:
    ops = [a.split("(", 1)[0] for a in run.actions]
    return all(op in ops for op in ("check_constraints", "load_dataset", "run_analysis")) and any(
        '"method"' in a for a in run.actions if a.startswith("submit_report")
    )


def simulate_verdicts(
    runs: Sequence[Run],
    *,
    views: Sequence[str] = ("original", "tool_rename", "reformat"),
    n_repeats: int = 3,
    noise: float = 0.04,
    seed: int = 0,
) -> list[VerdictRecord]:
    """Seeded simulated judges over the original runs of seed label 0.

    ``outcome_judge`` passes runs whose report has true quality ≥ 0.5; ``procedure_judge``
    passes runs that checked, loaded, analysed and named their method in the report. Both
    read the trajectory mapped back to canonical terms, so a view changes nothing but the
    per-call noise (each verdict flips with probability ``noise``, drawn from a hash of
    judge, view, repeat, record and seed).
    """
    records = [r for r in runs if r.condition == "original" and r.seed == 0]
    out = []
    for r in records:
        rid = f"{r.task}/{r.policy}"
        base = {"outcome_judge": r.quality >= 0.5, "procedure_judge": _procedure_ok(r)}
        for judge, ok in base.items():
            for view in views:
                for rep in range(n_repeats):
                    flip = _unit(judge, view, rep, rid, seed) < noise
                    verdict: Verdict = "pass" if ok != flip else "fail"
                    out.append(
                        VerdictRecord(
                            judge=judge,
                            view=view,
                            repeat=rep,
                            record_id=rid,
                            verdict=verdict,
                            native_reward=1.0 if r.passed else 0.0,
                        )
                    )
    return out


def _flip_rate(pairs: list[tuple[str, bool]], *, seed: int) -> dict[str, Any]:
    if not pairs:
        return {"rate": None, "ci95": None, "n_pairs": 0}
    clusters = [p[0] for p in pairs]
    flips = np.array([p[1] for p in pairs], dtype=float)
    iv = cluster_mean_bootstrap(clusters, flips, n_boot=2000, seed=seed)
    return {"rate": float(flips.mean()), "ci95": [iv.low, iv.high], "n_pairs": len(pairs)}


def _majority(verdicts: Iterable[str]) -> str:
    counts = Counter(verdicts)
    top = max(counts.values())
    # Ties resolve to the most conservative verdict.
    for v in ("fail", "insufficient", "pass"):
        if counts.get(v) == top:
            return v
    return "fail"


def judge_audit(
    verdicts: Sequence[VerdictRecord],
    *,
    reference_view: str = "original",
    native_threshold: float = 0.5,
    seed: int = 0,
) -> dict[str, Any]:
    """Flip rates, between-judge disagreement and agreement with native reward."""
    if not verdicts:
        raise DataError("judge audit: no verdict records")
    table: dict[tuple[str, str, int, str], str] = {}
    duplicates = 0
    for v in verdicts:
        key = (v.judge, v.view, v.repeat, v.record_id)
        duplicates += key in table
        table[key] = v.verdict
    native = {v.record_id: v.native_reward for v in verdicts if v.native_reward is not None}
    judges = sorted({k[0] for k in table})
    views = sorted({k[1] for k in table})
    repeats = sorted({k[2] for k in table})
    records = sorted({k[3] for k in table})
    missing = len(judges) * len(views) * len(repeats) * len(records) - len(table)
    ref = reference_view if reference_view in views else views[0]
    per_judge = []
    majority: dict[str, dict[str, str]] = defaultdict(dict)
    for j in judges:
        rep_pairs, view_pairs = [], []
        for rec in records:
            for view in views:
                got = [table[(j, view, r, rec)] for r in repeats if (j, view, r, rec) in table]
                rep_pairs += [(rec, a != b) for a, b in combinations(got, 2)]
            for r in repeats:
                base = table.get((j, ref, r, rec))
                for view in views:
                    other = table.get((j, view, r, rec))
                    if view != ref and base is not None and other is not None:
                        view_pairs.append((rec, base != other))
            got_ref = [table[(j, ref, r, rec)] for r in repeats if (j, ref, r, rec) in table]
            if got_ref:
                majority[j][rec] = _majority(got_ref)
        scored = [rec for rec in majority[j] if rec in native]
        mine = [majority[j][rec] == "pass" for rec in scored]
        theirs = [native[rec] >= native_threshold for rec in scored]  # type: ignore[operator]
        per_judge.append(
            {
                "judge": j,
                "repeat_flips": _flip_rate(rep_pairs, seed=seed),
                "view_flips": _flip_rate(view_pairs, seed=seed),
                "pass_rate": float(np.mean([v == "pass" for v in majority[j].values()])),
                "insufficient": sum(v == "insufficient" for v in majority[j].values()),
                "native_agreement": float(np.mean(np.equal(mine, theirs))) if scored else None,
                "native_kappa": cohen_kappa(mine, theirs) if scored else None,
                "n_native": len(scored),
            }
        )
    between = []
    for a, b in combinations(judges, 2):
        common = sorted(set(majority[a]) & set(majority[b]))
        va = [majority[a][r] for r in common]
        vb = [majority[b][r] for r in common]
        between.append(
            {
                "judges": [a, b],
                "n_records": len(common),
                "disagreement": float(np.mean(np.not_equal(va, vb))) if common else None,
                "kappa": cohen_kappa(va, vb) if common else None,
            }
        )
    return {
        "judges": per_judge,
        "between": between,
        "views": views,
        "reference_view": ref,
        "n_repeats": len(repeats),
        "n_records": len(records),
        "n_verdicts": len(verdicts),
        "missing_verdicts": missing,
        "duplicate_verdicts": duplicates,
    }

"""The seed's judge-audit statistics over verdict records (Table 8 of the seed).

On top of :func:`toolaudit.probes.judge_audit` (flips, agreement with native reward, κ):

* per judge: verdict shares over all calls, the share of replies with a usable reason
  (:func:`has_reason`: three words or more), view flips per view against the reference
  view, and **procedural objections**: among the judge's FAIL verdicts on natively
  successful records, the share whose reason the keyword heuristic
  (:func:`classify_reason`) reads as procedural, with examples;
* between judges: disagreement on the same (record, view) majority verdicts (over
  repeats), with a task-cluster bootstrap interval, κ, and for both a two-stage
  bootstrap interval that resamples tasks (their records) and, within each (record,
  view), each judge's calls before the majority is taken (:func:`between_intervals`),
  and every disagreeing (record, view) with both judges' reasons.

Native reward is a reference, not ground truth: these are consistency and agreement
measures, not accuracy.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from itertools import combinations
from typing import Any

import numpy as np

from toolaudit.probes.analysis._procedure_reasons import classify_reason
from toolaudit.probes.judges._records import (
    VerdictRecord,
    _flip_rate,
    _kappa,
    _majority,
    judge_audit,
)
from toolaudit.probes.judges._replies import has_reason
from toolaudit.probes.judges._views import AUDIT_VIEWS

VERDICTS = ("pass", "fail", "insufficient", "unparseable")
N_EXAMPLES = 5

Key = tuple[str, str]  # (record, view)


def _majorities(
    mine: Sequence[VerdictRecord],
) -> dict[Key, tuple[str, str | None]]:
    """(record, view) -> (majority verdict over parseable repeats, a reason for it)."""
    by_key: dict[Key, list[VerdictRecord]] = defaultdict(list)
    for v in mine:
        if v.verdict != "unparseable":
            by_key[(v.record_id, v.view)].append(v)
    out: dict[Key, tuple[str, str | None]] = {}
    for key, vs in by_key.items():
        top = _majority(v.verdict for v in vs)
        reason = next(v.reason for v in sorted(vs, key=lambda v: v.repeat) if v.verdict == top)
        out[key] = (top, reason)
    return out


def _procedural(mine: Sequence[VerdictRecord], threshold: float) -> dict[str, Any]:
    fails = [
        v for v in mine
        if v.verdict == "fail" and v.native_reward is not None and v.native_reward >= threshold
    ]  # fmt: skip
    kinds = [classify_reason(v.reason) for v in fails]
    counts = Counter(kinds)
    examples = {
        kind: [{"record_id": v.record_id, "view": v.view, "reason": v.reason}
               for v, k in zip(fails, kinds, strict=True) if k == kind][:N_EXAMPLES]
        for kind in ("procedure", "outcome", "mixed", "unclear")
    }  # fmt: skip
    return {
        "n_fail_on_native_pass": len(fails),
        "procedure": counts["procedure"],
        "outcome": counts["outcome"],
        "mixed": counts["mixed"],
        "unclear": counts["unclear"],
        "share": counts["procedure"] / len(fails) if fails else None,
        "classifier": "keyword heuristic (toolaudit.probes.analysis._procedure_reasons)",
        "examples": examples,
    }


def _per_view_flips(
    mine: Sequence[VerdictRecord], ref: str, views: Sequence[str], seed: int
) -> dict[str, Any]:
    table = {(v.view, v.repeat, v.record_id): v for v in mine if v.verdict != "unparseable"}
    out = {}
    for view in views:
        if view == ref:
            continue
        pairs = []
        for (vw, rep, rec), v in table.items():
            base = table.get((ref, rep, rec))
            if vw == view and base is not None:
                pairs.append((v.task_id or rec, v.verdict != base.verdict))
        out[view] = _flip_rate(pairs, seed=seed)
    return out


#: Replicates of the two-stage (records, calls) bootstrap of between-judge agreement.
N_BOOT_CALLS = 1000


def between_intervals(
    calls: dict[str, dict[Key, list[str]]],
    a: str,
    b: str,
    task: dict[str, str],
    *,
    seed: int,
    n_boot: int = N_BOOT_CALLS,
) -> dict[str, list[float] | None]:
    """95% percentile intervals of the disagreement and κ between judges ``a`` and ``b``
    on majority verdicts, by a two-stage bootstrap: tasks drawn with replacement (each
    bringing all its records), then within each (record, view) each judge's parseable
    calls drawn with replacement and their majority taken. So the interval carries both
    the records' and the calls' variation (a judge that flips between calls widens it).
    A replicate whose κ is undefined (one label on both sides) is left out of κ's.

    >>> calls = {"a": {("r1", "v"): ["pass"] * 3, ("r2", "v"): ["fail"] * 3},
    ...          "b": {("r1", "v"): ["pass"] * 3, ("r2", "v"): ["fail"] * 3}}
    >>> between_intervals(calls, "a", "b", {"r1": "t1", "r2": "t2"}, seed=0, n_boot=50)
    {'disagreement': [0.0, 0.0], 'kappa': [1.0, 1.0]}
    """
    common = sorted(set(calls[a]) & set(calls[b]))
    if not common:
        return {"disagreement": None, "kappa": None}
    by_task: dict[str, list[Key]] = defaultdict(list)
    for key in common:
        by_task[task[key[0]]].append(key)
    tasks = sorted(by_task)
    rng = np.random.default_rng(seed)
    rates: list[float] = []
    kappas: list[float] = []
    for _ in range(n_boot):
        va: list[str] = []
        vb: list[str] = []
        for t in rng.choice(len(tasks), size=len(tasks), replace=True):
            for key in by_task[tasks[t]]:
                for side, out in ((a, va), (b, vb)):
                    draws = calls[side][key]
                    picked = [draws[i] for i in rng.integers(0, len(draws), size=len(draws))]
                    out.append(_majority(picked))
        rates.append(float(np.mean([x != y for x, y in zip(va, vb, strict=True)])))
        k = _kappa(va, vb)
        if k is not None:
            kappas.append(k)

    def pct(xs: list[float]) -> list[float] | None:
        return [float(np.percentile(xs, 2.5)), float(np.percentile(xs, 97.5))] if xs else None

    return {"disagreement": pct(rates), "kappa": pct(kappas)}


def _between(
    verdicts: Sequence[VerdictRecord], judges: Sequence[str], seed: int
) -> list[dict[str, Any]]:
    task = {v.record_id: v.task_id or v.record_id for v in verdicts}
    maj = {j: _majorities([v for v in verdicts if v.judge == j]) for j in judges}
    calls: dict[str, dict[Key, list[str]]] = {j: defaultdict(list) for j in judges}
    for v in verdicts:
        if v.verdict != "unparseable" and v.judge in calls:
            calls[v.judge][(v.record_id, v.view)].append(v.verdict)
    out = []
    for a, b in combinations(judges, 2):
        common = sorted(set(maj[a]) & set(maj[b]))
        va = [maj[a][k][0] for k in common]
        vb = [maj[b][k][0] for k in common]
        rate = _flip_rate([(task[k[0]], x != y) for k, x, y in zip(common, va, vb, strict=True)],
                          seed=seed)  # fmt: skip
        out.append({
            "judges": [a, b],
            "n_pairs": len(common),
            "n_records": len({k[0] for k in common}),
            "disagreement": rate["rate"],
            "ci95": rate["ci95"],
            "kappa": _kappa(va, vb) if common else None,
            "records_calls_ci95": between_intervals(calls, a, b, task, seed=seed),
            "disagreements": [
                {"record_id": k[0], "view": k[1], "task_id": task[k[0]],
                 "verdicts": [maj[a][k][0], maj[b][k][0]],
                 "reasons": [maj[a][k][1], maj[b][k][1]]}
                for k in common if maj[a][k][0] != maj[b][k][0]
            ],
        })  # fmt: skip
    return out


def seed_judge_audit(
    verdicts: Sequence[VerdictRecord],
    *,
    reference_view: str = "original",
    native_threshold: float = 0.5,
    seed: int = 0,
) -> dict[str, Any]:
    """:func:`judge_audit` plus the seed's per-judge and between-judge statistics.

    ``between`` holds, per pair of judges, the disagreement on the same (record, view)
    majority verdicts (``n_pairs`` of them), its task-cluster 95% interval, κ and the
    disagreeing pairs with both reasons.
    """
    result = judge_audit(
        verdicts, reference_view=reference_view, native_threshold=native_threshold, seed=seed
    )
    ref = result["reference_view"]
    order = {v: i for i, v in enumerate(AUDIT_VIEWS)}
    result["views"] = sorted(result["views"], key=lambda v: (order.get(v, len(order)), v))
    for row in result["judges"]:
        mine = [v for v in verdicts if v.judge == row["judge"]]
        counts: Counter[str] = Counter(v.verdict for v in mine)
        row["verdict_shares"] = {k: counts[k] / len(mine) for k in VERDICTS}
        row["reason_share"] = float(np.mean([has_reason(v.reason) for v in mine]))
        row["view_flips_by_view"] = _per_view_flips(mine, ref, result["views"], seed)
        row["procedural_objections"] = _procedural(mine, native_threshold)
    result["between"] = _between(verdicts, [r["judge"] for r in result["judges"]], seed)
    result["n_tasks"] = len({v.task_id or v.record_id for v in verdicts})
    result["native_pass_share"] = float(
        np.mean([r >= native_threshold for r in {v.record_id: v.native_reward for v in verdicts
                                                  if v.native_reward is not None}.values()])
    ) if any(v.native_reward is not None for v in verdicts) else None  # fmt: skip
    return result

"""Judge audit from verdict records (judge × view × repeat × record).

Within-judge flips across views (the same fixed trajectory presented differently) are
compared with flips across identical repeats (byte-identical payloads sent again);
between-judge disagreement, agreement with native reward and Cohen's κ describe how
the judges relate to each other and to the benchmark's own reward. Native reward is a
reference, not ground truth: these are consistency and agreement measures, not accuracy.

Verdicts come from real judges (:func:`toolaudit.probes.judge_records`, any
``toolaudit.models`` backend) or from a JSONL file (:func:`read_verdicts`). A verdict that
could not be read from the judge's reply is ``unparseable``: it is counted (its share is
reported per judge) and left out of flips, majorities and κ. Cohen's κ is scikit-learn's
``cohen_kappa_score``.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from itertools import combinations
from pathlib import Path
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict

from toolaudit.errors import DataError, check_min
from toolaudit.stats import cluster_mean_bootstrap
from toolaudit.traces import Episode, read_jsonl

Verdict = Literal["pass", "fail", "insufficient", "unparseable"]


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
    reply: str | None = None
    task_id: str | None = None
    reason: str | None = None


def read_verdicts(path: str | Path) -> list[VerdictRecord]:
    """Read verdict records from JSONL (errors name the file, line and field)."""
    return list(read_jsonl(path, VerdictRecord))


def _flip_rate(pairs: list[tuple[str, bool]], *, seed: int) -> dict[str, Any]:
    if not pairs:
        return {"rate": None, "ci95": None, "n_pairs": 0}
    clusters = [p[0] for p in pairs]
    flips = np.array([p[1] for p in pairs], dtype=float)
    iv = cluster_mean_bootstrap(clusters, flips, n_boot=2000, seed=seed)
    return {"rate": float(flips.mean()), "ci95": [iv.low, iv.high], "n_pairs": len(pairs)}


def _kappa(a: Sequence[object], b: Sequence[object]) -> float | None:
    """Cohen's κ (:func:`toolaudit.stats.cohen_kappa`, scikit-learn's); None when it is
    undefined (one label on both sides)."""
    from toolaudit.stats import cohen_kappa

    k = cohen_kappa(a, b)
    return None if np.isnan(k) else k


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
    from toolaudit.probes.analysis._compare import check_pass_threshold

    check_pass_threshold("native_threshold", native_threshold)
    check_min("seed", seed, 0)
    if not verdicts:
        raise DataError("judge audit: no verdict records")
    table: dict[tuple[str, str, int, str], str] = {}
    duplicates = 0
    unparseable: Counter[str] = Counter()
    calls: Counter[str] = Counter()
    for v in verdicts:
        key = (v.judge, v.view, v.repeat, v.record_id)
        duplicates += key in table
        calls[v.judge] += 1
        if v.verdict == "unparseable":
            unparseable[v.judge] += 1
            table.pop(key, None)
            continue
        table[key] = v.verdict
    keys_all = {(v.judge, v.view, v.repeat, v.record_id) for v in verdicts}
    native = {v.record_id: v.native_reward for v in verdicts if v.native_reward is not None}
    # Intervals resample whole tasks when the records name theirs (records of one task
    # are not independent), else whole records.
    cluster = {v.record_id: v.task_id or v.record_id for v in verdicts}
    judges = sorted({k[0] for k in keys_all})
    views = sorted({k[1] for k in keys_all})
    repeats = sorted({k[2] for k in keys_all})
    records = sorted({k[3] for k in keys_all})
    missing = len(judges) * len(views) * len(repeats) * len(records) - len(keys_all)
    ref = reference_view if reference_view in views else views[0]
    per_judge = []
    majority: dict[str, dict[str, str]] = defaultdict(dict)
    for j in judges:
        rep_pairs, view_pairs = [], []
        for rec in records:
            for view in views:
                got = [table[(j, view, r, rec)] for r in repeats if (j, view, r, rec) in table]
                rep_pairs += [(cluster[rec], a != b) for a, b in combinations(got, 2)]
            for r in repeats:
                base = table.get((j, ref, r, rec))
                for view in views:
                    other = table.get((j, view, r, rec))
                    if view != ref and base is not None and other is not None:
                        view_pairs.append((cluster[rec], base != other))
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
                "pass_rate": float(np.mean([v == "pass" for v in majority[j].values()]))
                if majority[j]
                else None,
                "n_calls": calls[j],
                "unparseable": unparseable[j],
                "unparseable_share": unparseable[j] / calls[j] if calls[j] else None,
                "insufficient": sum(v == "insufficient" for v in majority[j].values()),
                "native_agreement": float(np.mean(np.equal(mine, theirs))) if scored else None,
                "native_kappa": _kappa(mine, theirs) if scored else None,
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
                "kappa": _kappa(va, vb) if common else None,
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
        "n_unparseable": sum(unparseable.values()),
        "unparseable_share": sum(unparseable.values()) / len(verdicts),
        "missing_verdicts": missing,
        "duplicate_verdicts": duplicates,
    }


def record_id(episode: Episode) -> str:
    """A stable id: task, policy, condition and seed label for study records."""
    src = episode.source
    if "policy" in src:
        return f"{episode.task_id}/{src['policy']}/{episode.condition}/{src.get('seed_label', 0)}"
    return str(src.get("episode_id") or f"{episode.task_id}#{episode.trial}")


def native_pass(episode: Episode) -> float | None:
    """The benchmark's own verdict as 1.0 / 0.0 (kept from the judge, used for κ)."""
    if "passed" in episode.source:
        return 1.0 if episode.source["passed"] else 0.0
    return episode.reward

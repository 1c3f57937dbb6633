"""Statistics the seed uses: corrected equivalence (TOST), task-level comparisons, pass^k.

* **Equivalence** of a paired difference Δ at ±margin is a two one-sided test (TOST). With
  a task-cluster bootstrap the TOST p-value is the larger of the shares of replicates at
  or below −margin and at or above +margin, so "p < α" is the same decision as "the
  (1 − 2α) percentile interval lies inside the band" (the seed's 90% rule at α = 0.05).
  Across a family of m comparisons the decision is corrected two ways: Bonferroni
  (p < α/m, equivalently the (1 − 2α/m) interval inside the band) and Holm's step-down.
  The same replicates give a two-sided bootstrap p-value for Δ ≠ 0, corrected alike, so
  each comparison is ``equivalent``, ``different`` or ``inconclusive`` after correction.
* **Task-level paired comparison** for files with several trials per task: each task's
  pass rate (share of its trials that pass) on each side, the per-task difference, and a
  bootstrap over tasks; trial indices are never paired (they are arbitrary labels).
* **pass^k** as tau2-bench computes it: per task C(successes, k) / C(trials, k), averaged
  over tasks, with success meaning reward within 1e-6 of 1, for k = 1 .. the smallest
  trial count of any task. Larger k are also given over the tasks that have ≥ k trials,
  labelled with their task count.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from numpy.typing import ArrayLike

from toolaudit.stats import (
    Interval,
    equivalence_verdict,
    holm_reject,
    sign_test,
)
from toolaudit.stats import (
    cluster_mean_replicates as _cluster_draws,
)

Verdict = Literal["equivalent", "different", "inconclusive", "not_estimable"]
TAU2_SUCCESS_TOL = 1e-6


@dataclass(frozen=True, slots=True)
class Replicates:
    """A statistic's point estimate and its task-cluster bootstrap replicates."""

    estimate: float
    reps: np.ndarray

    def interval(self, level: float) -> Interval:
        """The percentile interval at ``level`` (NaN bounds without replicates)."""
        if self.reps.size == 0 or math.isnan(self.estimate):
            return Interval(self.estimate, float("nan"), float("nan"), level)
        alpha = (1.0 - level) / 2.0
        lo, hi = np.quantile(self.reps, [alpha, 1.0 - alpha])
        # Round away float noise so a difference of exactly the margin is judged stably.
        return Interval(self.estimate, round(float(lo), 9), round(float(hi), 9), level)

    def tost_p(self, margin: float) -> float:
        """Bootstrap TOST p-value for |Δ| < margin (the larger one-sided share)."""
        if self.reps.size == 0:
            return float("nan")
        r = np.round(self.reps, 9)
        return max(float(np.mean(r <= -margin)), float(np.mean(r >= margin)))

    def diff_p(self) -> float:
        """Two-sided bootstrap p-value for Δ ≠ 0 (capped at 1)."""
        if self.reps.size == 0:
            return float("nan")
        r = np.round(self.reps, 9)
        return min(1.0, 2.0 * min(float(np.mean(r <= 0)), float(np.mean(r >= 0))))


def cluster_mean_replicates(
    clusters: Sequence[object], values: ArrayLike, *, n_boot: int = 2000, seed: int = 0
) -> Replicates:
    """Replicates of the pooled mean of ``values`` resampling whole clusters.

    The draws are :func:`toolaudit.stats.cluster_mean_replicates`, so intervals agree with
    :func:`toolaudit.stats.cluster_mean_bootstrap` for the same seed.
    """
    return Replicates(*_cluster_draws(clusters, values, n_boot=n_boot, seed=seed))


def _verdict(equivalent: bool, different: bool) -> Verdict:
    if equivalent:
        return "equivalent"
    return "different" if different else "inconclusive"


def corrected_equivalence(
    family: Sequence[Replicates], *, margin: float, alpha: float = 0.05
) -> list[dict[str, Any]]:
    """Equivalence verdicts for a family of paired differences, uncorrected and corrected.

    Returns one dict per member: ``tost_p``, ``diff_p``, ``equivalence`` (the (1 − 2α)
    interval inside ±margin: equivalent; excluding 0: different), the same rule on the
    Bonferroni (1 − 2α/m) interval (``equivalence_bonferroni``, ``delta_ci_bonferroni``),
    and ``equivalence_holm`` (Holm's step-down on the TOST and the two-sided p-values);
    ``family_size`` is m.

    Example:
        >>> r = Replicates(0.0, np.linspace(-0.05, 0.05, 101))
        >>> corrected_equivalence([r], margin=0.10)[0]["equivalence_holm"]
        'equivalent'
    """
    m = sum(1 for r in family if r.reps.size)
    tost = [r.tost_p(margin) for r in family]
    diff = [r.diff_p() for r in family]
    holm_eq = holm_reject(tost, alpha)
    holm_diff = holm_reject(diff, alpha)
    level_b = 1.0 - 2.0 * alpha / max(1, m)
    out = []
    for r, pt, pd, he, hd in zip(family, tost, diff, holm_eq, holm_diff, strict=True):
        ok = not math.isnan(pt)
        iv = r.interval(1.0 - 2.0 * alpha)
        ivb = r.interval(level_b)
        out.append(
            {
                "tost_p": pt if ok else None,
                "diff_p": pd if ok else None,
                "equivalence": equivalence_verdict(iv, margin=margin).verdict,
                "equivalence_bonferroni": equivalence_verdict(ivb, margin=margin).verdict,
                "delta_ci_bonferroni": [ivb.low, ivb.high],
                "bonferroni_level": level_b,
                "equivalence_holm": _verdict(he, hd) if ok else "not_estimable",
                "family_size": m,
                "alpha": alpha,
                "interval_low": iv.low,
                "interval_high": iv.high,
            }
        )
    return out


def tau2_success(reward: float) -> bool:
    """tau2-bench's success rule: reward within 1e-6 of 1."""
    return abs(reward - 1.0) <= TAU2_SUCCESS_TOL


def pass_hat_k(successes: Mapping[str, Sequence[bool]]) -> dict[str, Any]:
    """tau2-bench's pass^k from per-task success lists.

    ``pass_hat_k`` holds k = 1 .. min trials (every task counts, as tau2 computes it);
    ``pass_hat_k_partial`` holds every k up to the largest trial count, each over only the
    tasks with at least k trials (``n_tasks`` says how many).

    Example:
        >>> pass_hat_k({"a": [True, True], "b": [True, False]})["pass_hat_k"]
        {'1': 0.75, '2': 0.5}
    """
    counts = {t: (sum(map(bool, v)), len(v)) for t, v in successes.items() if v}
    if not counts:
        return {"tasks": 0, "max_k": 0, "pass_hat_k": {}, "pass_hat_k_partial": {}}
    min_n = min(n for _, n in counts.values())
    max_n = max(n for _, n in counts.values())

    def at(k: int) -> tuple[float, int]:
        vals = [math.comb(c, k) / math.comb(n, k) for c, n in counts.values() if n >= k]
        return float(np.mean(vals)), len(vals)

    return {
        "tasks": len(counts),
        "max_k": min_n,
        "trials_per_task": sorted({n for _, n in counts.values()}),
        "pass_hat_k": {str(k): at(k)[0] for k in range(1, min_n + 1)},
        "pass_hat_k_partial": {
            str(k): {"value": at(k)[0], "n_tasks": at(k)[1]} for k in range(1, max_n + 1)
        },
    }


def task_level_comparison(
    a: Mapping[str, Sequence[float]],
    b: Mapping[str, Sequence[float]],
    tasks: Sequence[str],
    *,
    threshold: float,
    margin: float,
    seed: int = 0,
    n_boot: int = 2000,
) -> dict[str, Any]:
    """Per-task pass rates on each side over ``tasks``, their paired difference (B − A)
    with a bootstrap over tasks, the equivalence verdict and an exact sign test over tasks.

    Trials are never paired with each other: each task contributes one number per side.
    """
    rate_a = np.array([np.mean([r >= threshold for r in a[t]]) for t in tasks])
    rate_b = np.array([np.mean([r >= threshold for r in b[t]]) for t in tasks])
    diffs = rate_b - rate_a
    reps = cluster_mean_replicates(list(tasks), diffs, n_boot=n_boot, seed=seed)
    eq = corrected_equivalence([reps], margin=margin)[0]
    ci95 = reps.interval(0.95)
    ci90 = reps.interval(0.90)
    return {
        "n_tasks": len(tasks),
        "pass_rate_a": float(rate_a.mean()),
        "pass_rate_b": float(rate_b.mean()),
        "delta": float(diffs.mean()),
        "delta_ci95": [ci95.low, ci95.high],
        "delta_ci90": [ci90.low, ci90.high],
        "equivalence": eq["equivalence"],
        "tost_p": eq["tost_p"],
        "tasks_b_higher": int((diffs > 0).sum()),
        "tasks_a_higher": int((diffs < 0).sum()),
        "tasks_equal": int((diffs == 0).sum()),
        "sign_test_p": sign_test(diffs),
        "per_task": [
            {"task": t, "pass_rate_a": float(x), "pass_rate_b": float(y)}
            for t, x, y in zip(tasks, rate_a, rate_b, strict=True)
        ],
    }

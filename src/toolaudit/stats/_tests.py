"""Paired tests, multiplicity corrections, agreement, and cluster bootstrap."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike
from scipy.stats import binomtest

from toolaudit.stats._auroc import Interval


def sign_test(deltas: ArrayLike) -> float:
    """Two-sided exact sign test of median(Δ) = 0; zeros are dropped. ``nan`` if all zero."""
    d = np.asarray(deltas, dtype=float)
    d = d[d != 0]
    if d.size == 0:
        return float("nan")
    return float(binomtest(int((d > 0).sum()), int(d.size), 0.5).pvalue)


def mcnemar_exact(b: int, c: int) -> float:
    """Exact two-sided McNemar p-value from the discordant counts ``b`` and ``c``."""
    n = b + c
    if n == 0:
        return 1.0
    return float(binomtest(b, n, 0.5).pvalue)


def holm(pvalues: Sequence[float]) -> list[float]:
    """Holm step-down adjusted p-values (monotone, capped at 1; ``nan`` kept)."""
    p = np.asarray(pvalues, dtype=float)
    out = np.full(p.shape, np.nan)
    ok = np.flatnonzero(~np.isnan(p))
    m = ok.size
    order = ok[np.argsort(p[ok], kind="stable")]
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p[i]))
        out[i] = running
    return [float(v) for v in out]


def bonferroni(pvalues: Sequence[float]) -> list[float]:
    """Bonferroni adjusted p-values (capped at 1; ``nan`` kept)."""
    p = np.asarray(pvalues, dtype=float)
    m = int((~np.isnan(p)).sum())
    return [float(v) for v in np.minimum(1.0, p * m)]


def cohen_kappa(a: Sequence[object], b: Sequence[object]) -> float:
    """Cohen's κ between two raters' labels on the same items: scikit-learn's
    ``cohen_kappa_score`` on the labels as strings; ``nan`` where it is undefined (no
    items, or a single label on both sides, where chance agreement is already 1).
    """
    if len(a) != len(b) or not a:
        return float("nan")
    x, y = [str(v) for v in a], [str(v) for v in b]
    if len(set(x) | set(y)) < 2:
        return float("nan")
    from sklearn.metrics import cohen_kappa_score

    with np.errstate(divide="ignore", invalid="ignore"):
        return float(cohen_kappa_score(x, y))


def holm_reject(pvalues: Sequence[float], alpha: float) -> list[bool]:
    """Holm's step-down rejections at family-wise level ``alpha`` (``nan`` never
    rejected): exactly the hypotheses whose :func:`holm` adjusted p-value is below it."""
    return [bool(v < alpha) for v in holm(pvalues)]  # nan < alpha is False


def cluster_bootstrap(
    clusters: Sequence[object],
    statistic: Callable[[np.ndarray], float],
    *,
    n_boot: int = 2000,
    level: float = 0.95,
    seed: int = 0,
) -> Interval:
    """Percentile interval for ``statistic(row_indices)``, resampling whole clusters.

    ``statistic`` receives an index array into the rows (with repeats) and returns a float.
    """
    labels = np.asarray([str(c) for c in clusters])
    uniq, inverse = np.unique(labels, return_inverse=True)
    members = [np.flatnonzero(inverse == k) for k in range(uniq.size)]
    est = statistic(np.arange(labels.size))
    rng = np.random.default_rng(seed)
    reps = np.empty(n_boot)
    for b in range(n_boot):
        pick = rng.integers(0, uniq.size, size=uniq.size)
        reps[b] = statistic(np.concatenate([members[k] for k in pick]))
    reps = reps[~np.isnan(reps)]
    if reps.size == 0 or np.isnan(est):
        return Interval(float(est), float("nan"), float("nan"), level)
    alpha = (1.0 - level) / 2.0
    lo, hi = np.quantile(reps, [alpha, 1.0 - alpha])
    return Interval(float(est), float(lo), float(hi), level)


@dataclass(frozen=True, slots=True)
class Equivalence:
    """The verdict on a paired difference's (1 - 2 alpha) interval against ±margin, and
    the two facts beside it (``None`` when the interval is not estimable)."""

    verdict: str  # "equivalent", "different", "inconclusive" or "not_estimable"
    margin: float
    interval: Interval
    excludes_zero: bool | None = None  # a change is detected
    outside_margin: bool | None = None  # the interval lies wholly outside ±margin


def equivalence_verdict(interval: Interval, *, margin: float = 0.10) -> Equivalence:
    """Judge a paired difference's 90% interval against ±margin, one rule everywhere:

    * ``equivalent``: the interval lies inside (-margin, +margin) (the seed's TOST rule);
    * ``different``: otherwise, when the interval excludes 0 (a change is detected);
    * ``inconclusive``: otherwise (the interval holds 0 and reaches past a margin);
    * ``not_estimable``: no interval (fewer than two clusters, or no value).

    ``excludes_zero`` and ``outside_margin`` (a change larger than the margin: the whole
    interval beyond +margin or below -margin) are reported beside the verdict.

    Example:
        >>> from toolaudit.stats import Interval
        >>> e = equivalence_verdict(Interval(-0.16, -0.30, -0.02, 0.90))
        >>> e.verdict, e.excludes_zero, e.outside_margin
        ('different', True, False)
    """
    if np.isnan(interval.low) or np.isnan(interval.high):
        return Equivalence("not_estimable", margin, interval)
    excludes_zero = bool(interval.low > 0 or interval.high < 0)
    outside = bool(interval.low >= margin or interval.high <= -margin)
    if -margin < interval.low and interval.high < margin:
        verdict = "equivalent"
    elif excludes_zero:
        verdict = "different"
    else:
        verdict = "inconclusive"
    return Equivalence(verdict, margin, interval, excludes_zero, outside)

"""AUROC and bootstrap intervals for it (stratified and paired)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike
from scipy.stats import rankdata


def auroc(y: ArrayLike, score: ArrayLike) -> float:
    """Area under the ROC curve via the Mann-Whitney statistic (ties count one half).

    Returns ``nan`` when ``y`` holds a single class (the AUROC is undefined there).

    >>> auroc([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8])
    0.75
    """
    y_arr = np.asarray(y).astype(bool)
    s = np.asarray(score, dtype=float)
    n_pos = int(y_arr.sum())
    n_neg = y_arr.size - n_pos
    if n_pos == 0 or n_neg == 0:
        return float("nan")
    ranks = rankdata(s)
    u = ranks[y_arr].sum() - n_pos * (n_pos + 1) / 2.0
    return float(u / (n_pos * n_neg))


def _auroc_rows(y: np.ndarray, scores: np.ndarray) -> np.ndarray:
    """AUROC of each row of ``scores`` (B, n) against the rows of ``y`` (B, n)."""
    ranks = np.apply_along_axis(rankdata, 1, scores)
    n_pos = y.sum(axis=1)
    n_neg = y.shape[1] - n_pos
    u = (ranks * y).sum(axis=1) - n_pos * (n_pos + 1) / 2.0
    with np.errstate(invalid="ignore", divide="ignore"):
        out: np.ndarray = u / (n_pos * n_neg)
    return out


def _replicate_aurocs(
    s_pos: np.ndarray, s_neg: np.ndarray, draw_p: np.ndarray, draw_n: np.ndarray
) -> np.ndarray:
    """AUROC of each bootstrap replicate (row of ``draw_p`` / ``draw_n``: the drawn
    positions among the positives and the negatives). A replicate is described by how
    often it drew each positive and each negative; with the negatives sorted once, its
    Mann-Whitney count is a weighted sum of cumulative negative counts at each
    positive's score: O(n) per replicate instead of a sort. Every term is a whole or
    half count, so the sums are exact and equal the rank formula's bit for bit."""
    n_boot = draw_p.shape[0]
    n_pos, n_neg = s_pos.size, s_neg.size
    order = np.argsort(s_neg, kind="stable")
    sorted_neg = s_neg[order]
    rank_of = np.empty(n_neg, dtype=np.int64)
    rank_of[order] = np.arange(n_neg)
    reps = np.empty(n_boot, dtype=float)
    lo = np.searchsorted(sorted_neg, s_pos, side="left")
    hi = np.searchsorted(sorted_neg, s_pos, side="right")
    step = max(1, 2_000_000 // max(n_neg + n_pos, 1))
    for b0 in range(0, n_boot, step):
        b1 = min(n_boot, b0 + step)
        nb = b1 - b0
        offs = (np.arange(nb) * n_neg)[:, None]
        cnt_n = np.bincount((offs + rank_of[draw_n[b0:b1]]).ravel(), minlength=nb * n_neg)
        cum = np.zeros((nb, n_neg + 1))
        np.cumsum(cnt_n.reshape(nb, n_neg), axis=1, out=cum[:, 1:])
        offp = (np.arange(nb) * n_pos)[:, None]
        cnt_p = np.bincount((offp + draw_p[b0:b1]).ravel(), minlength=nb * n_pos)
        cnt_p = cnt_p.reshape(nb, n_pos)
        below = np.take(cum, lo, axis=1)
        upto = np.take(cum, hi, axis=1)
        wins = (cnt_p * (below + 0.5 * (upto - below))).sum(axis=1)
        reps[b0:b1] = wins / (n_pos * n_neg)
    return reps


@dataclass(frozen=True, slots=True)
class Interval:
    """A point estimate with a two-sided percentile interval."""

    estimate: float
    low: float
    high: float
    level: float = 0.95

    def as_list(self) -> list[float]:
        """``[low, high]`` for JSON."""
        return [self.low, self.high]


def bootstrap_auroc(
    y: ArrayLike,
    score: ArrayLike,
    *,
    n_boot: int = 2000,
    level: float = 0.95,
    seed: int = 0,
) -> Interval:
    """AUROC with a stratified percentile bootstrap interval (positives and negatives
    resampled separately, so every replicate has both classes).

    Each replicate is counted, not sorted (``_replicate_aurocs``).
    ``tests/stats/test_bootstrap.py`` checks it draw for draw against the
    straightforward version (resample, rank, Mann-Whitney) with the same generator calls.

    >>> iv = bootstrap_auroc([0, 0, 1, 1, 0, 1], [0.1, 0.4, 0.35, 0.8, 0.2, 0.9], seed=1)
    >>> round(iv.estimate, 4)
    0.8889
    """
    y_arr = np.asarray(y).astype(bool)
    s = np.asarray(score, dtype=float)
    est = auroc(y_arr, s)
    if np.isnan(est):
        return Interval(est, float("nan"), float("nan"), level)
    rng = np.random.default_rng(seed)
    pos = np.flatnonzero(y_arr)
    neg = np.flatnonzero(~y_arr)
    draw_p = rng.integers(0, pos.size, size=(n_boot, pos.size))
    draw_n = rng.integers(0, neg.size, size=(n_boot, neg.size))
    reps = _replicate_aurocs(s[pos], s[neg], draw_p, draw_n)
    alpha = (1.0 - level) / 2.0
    q_lo, q_hi = np.quantile(reps, [alpha, 1.0 - alpha])
    return Interval(est, float(q_lo), float(q_hi), level)


def paired_bootstrap_auroc_delta(
    y: ArrayLike,
    score_a: ArrayLike,
    score_b: ArrayLike,
    *,
    n_boot: int = 2000,
    level: float = 0.95,
    seed: int = 0,
) -> Interval:
    """Δ = AUROC(a) − AUROC(b) on the same rows, with a paired stratified bootstrap
    (each replicate resamples rows once and scores both variants on them)."""
    y_arr = np.asarray(y).astype(bool)
    a = np.asarray(score_a, dtype=float)
    b = np.asarray(score_b, dtype=float)
    est = auroc(y_arr, a) - auroc(y_arr, b)
    if np.isnan(est):
        return Interval(est, float("nan"), float("nan"), level)
    rng = np.random.default_rng(seed)
    pos = np.flatnonzero(y_arr)
    neg = np.flatnonzero(~y_arr)
    # one set of stratified draws for both scores, counted (not ranked) per replicate
    draw_p = rng.integers(0, pos.size, size=(n_boot, pos.size))
    draw_n = rng.integers(0, neg.size, size=(n_boot, neg.size))
    reps = _replicate_aurocs(a[pos], a[neg], draw_p, draw_n) - _replicate_aurocs(
        b[pos], b[neg], draw_p, draw_n
    )
    alpha = (1.0 - level) / 2.0
    lo, hi = np.quantile(reps, [alpha, 1.0 - alpha])
    return Interval(float(est), float(lo), float(hi), level)


def paired_permutation_auroc(
    y: ArrayLike,
    score_a: ArrayLike,
    score_b: ArrayLike,
    *,
    n_perm: int = 2000,
    seed: int = 0,
) -> float:
    """Two-sided p-value for AUROC(a) = AUROC(b) on paired scores (the same rows scored
    twice, on one scale): each row's two raw scores are swapped with probability one half.

    The raw scores are swapped, never ranks taken within each variant: separate ranking
    puts a variant with many ties on another scale, so swapping ranks manufactures
    differences (a variant that changes one row of 245 came out at p = 0.001). Swapping
    raw scores is the same test as ranking the pooled 2n scores jointly, since AUROC
    depends only on the order of the scores. A row whose two scores are equal is left as
    it is by every swap, so a one-row change can never be significant.

    Example:
        >>> y = [0, 0, 1, 1]
        >>> paired_permutation_auroc(y, [0.1, 0.2, 0.8, 0.9], [0.1, 0.2, 0.8, 0.9])
        1.0
    """
    y_arr = np.asarray(y).astype(bool)
    a = np.asarray(score_a, dtype=float)
    b = np.asarray(score_b, dtype=float)
    observed = abs(auroc(y_arr, a) - auroc(y_arr, b))
    if np.isnan(observed):
        return float("nan")
    rng = np.random.default_rng(seed)
    swap = rng.random((n_perm, y_arr.size)) < 0.5
    pa = np.where(swap, b, a)
    pb = np.where(swap, a, b)
    yy = np.broadcast_to(y_arr.astype(float), pa.shape)
    diffs = np.abs(_auroc_rows(yy, pa) - _auroc_rows(yy, pb))
    return float((1 + np.sum(diffs >= observed - 1e-12)) / (n_perm + 1))


@dataclass(frozen=True, slots=True)
class GroupNull:
    """An AUROC next to what label-free scores reach on the same groups.

    ``null_mean`` and ``low``/``high`` describe the AUROC when the labels are permuted
    within each group (each group keeps its own positives count); ``p_value`` is the
    two-sided permutation p-value of the observed AUROC's distance from ``null_mean``.
    """

    estimate: float
    null_mean: float
    low: float
    high: float
    p_value: float
    n_perm: int
    level: float = 0.95

    def as_json(self) -> dict[str, Any]:
        """The fields, for JSON."""
        return {
            "auroc": self.estimate,
            "null_mean": self.null_mean,
            "null_ci": [self.low, self.high],
            "p_value": self.p_value,
            "n_perm": self.n_perm,
        }


def group_permutation_auroc(
    y: ArrayLike,
    score: ArrayLike,
    groups: ArrayLike,
    *,
    n_perm: int = 2000,
    level: float = 0.95,
    seed: int = 0,
) -> GroupNull:
    """AUROC against its within-group permutation null.

    When the groups' positive rates differ and the scores differ by group (a model fit on
    other groups scores a whole test cluster higher or lower), label-free scores do not
    centre on 0.5: the pooled AUROC shifts towards whichever groups the model happens to
    rank high. Permuting the labels within each group keeps that shift and removes any
    within-group signal, so the null says what scores that carry no label information
    reach on these groups. The rank of every row is fixed; a permutation draws each
    group's positives' ranks without replacement, so a draw costs one shuffle per group.

    >>> r = group_permutation_auroc([0, 1, 0, 1, 0, 0], [1, 2, 3, 4, 5, 6], list("aabbcc"), seed=0)
    >>> r.estimate, r.n_perm
    (0.375, 2000)
    """
    y_arr = np.asarray(y).astype(bool)
    s = np.asarray(score, dtype=float)
    g = np.asarray(groups)
    if not y_arr.size == s.size == g.size:
        raise ValueError("y, score and groups must have the same length")
    est = auroc(y_arr, s)
    if np.isnan(est):
        nan = float("nan")
        return GroupNull(est, nan, nan, nan, nan, n_perm, level)
    ranks = rankdata(s)
    n_pos = int(y_arr.sum())
    n_neg = y_arr.size - n_pos
    rng = np.random.default_rng(seed)
    rank_sums = np.zeros(n_perm)
    step = max(1, 4_000_000 // max(y_arr.size, 1))
    for label in np.unique(g):
        members = ranks[g == label]
        k = int(y_arr[g == label].sum())
        if k == 0:
            continue
        for b0 in range(0, n_perm, step):
            b1 = min(n_perm, b0 + step)
            draws = rng.permuted(np.broadcast_to(members, (b1 - b0, members.size)), axis=1)
            rank_sums[b0:b1] += draws[:, :k].sum(axis=1)
    null = (rank_sums - n_pos * (n_pos + 1) / 2.0) / (n_pos * n_neg)
    centre = float(null.mean())
    alpha = (1.0 - level) / 2.0
    q_lo, q_hi = np.quantile(null, [alpha, 1.0 - alpha])
    far = np.sum(np.abs(null - centre) >= abs(est - centre) - 1e-12)
    p = float((1 + far) / (n_perm + 1))
    return GroupNull(est, centre, float(q_lo), float(q_hi), p, n_perm, level)

"""AUROC and bootstrap intervals for it (stratified and paired)."""

from __future__ import annotations

from dataclasses import dataclass

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
        return u / (n_pos * n_neg)


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


def _stratified_indices(y: np.ndarray, n_boot: int, rng: np.random.Generator) -> np.ndarray:
    pos = np.flatnonzero(y)
    neg = np.flatnonzero(~y)
    ip = pos[rng.integers(0, pos.size, size=(n_boot, pos.size))]
    ineg = neg[rng.integers(0, neg.size, size=(n_boot, neg.size))]
    return np.concatenate([ip, ineg], axis=1)


def bootstrap_auroc(
    y: ArrayLike,
    score: ArrayLike,
    *,
    n_boot: int = 2000,
    level: float = 0.95,
    seed: int = 0,
) -> Interval:
    """AUROC with a stratified percentile bootstrap interval (positives and negatives
    resampled separately, so every replicate has both classes)."""
    y_arr = np.asarray(y).astype(bool)
    s = np.asarray(score, dtype=float)
    est = auroc(y_arr, s)
    if np.isnan(est):
        return Interval(est, float("nan"), float("nan"), level)
    rng = np.random.default_rng(seed)
    idx = _stratified_indices(y_arr, n_boot, rng)
    reps = _auroc_rows(y_arr[idx].astype(float), s[idx])
    alpha = (1.0 - level) / 2.0
    lo, hi = np.quantile(reps, [alpha, 1.0 - alpha])
    return Interval(est, float(lo), float(hi), level)


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
    idx = _stratified_indices(y_arr, n_boot, rng)
    yy = y_arr[idx].astype(float)
    reps = _auroc_rows(yy, a[idx]) - _auroc_rows(yy, b[idx])
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
    """Two-sided p-value for AUROC(a) = AUROC(b): each row's two scores are swapped
    with probability one half (scores are rank-normalised first so they are comparable)."""
    y_arr = np.asarray(y).astype(bool)
    a = rankdata(np.asarray(score_a, dtype=float)) / len(y_arr)
    b = rankdata(np.asarray(score_b, dtype=float)) / len(y_arr)
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

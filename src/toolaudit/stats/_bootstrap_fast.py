"""A fast stratified bootstrap of the AUROC, draw-for-draw equal to ``bootstrap_auroc``.

``bootstrap_auroc`` ranks every replicate (``n_boot`` sorts). Here each replicate is
described by how often it drew each positive and each negative; with the negatives
sorted once, a replicate's Mann-Whitney count is a weighted sum of cumulative negative
counts at each positive's score, O(n) per replicate instead of O(n log n). The random
draws are identical to ``bootstrap_auroc`` (same generator calls), so the replicates are
the same numbers up to floating-point rounding.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from toolaudit.stats._auroc import Interval, auroc


def bootstrap_auroc_fast(
    y: ArrayLike,
    score: ArrayLike,
    *,
    n_boot: int = 2000,
    level: float = 0.95,
    seed: int = 0,
) -> Interval:
    """AUROC with a stratified percentile bootstrap interval (see module docstring).

    >>> iv = bootstrap_auroc_fast([0, 0, 1, 1, 0, 1], [0.1, 0.4, 0.35, 0.8, 0.2, 0.9], seed=1)
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
    s_pos, s_neg = s[pos], s[neg]
    order = np.argsort(s_neg, kind="stable")
    sorted_neg = s_neg[order]
    rank_of = np.empty(neg.size, dtype=np.int64)
    rank_of[order] = np.arange(neg.size)
    reps = np.empty(n_boot, dtype=float)
    lo = np.searchsorted(sorted_neg, s_pos, side="left")
    hi = np.searchsorted(sorted_neg, s_pos, side="right")
    step = max(1, 2_000_000 // max(neg.size + pos.size, 1))
    for b0 in range(0, n_boot, step):
        b1 = min(n_boot, b0 + step)
        nb = b1 - b0
        offs = (np.arange(nb) * neg.size)[:, None]
        cnt_n = np.bincount((offs + rank_of[draw_n[b0:b1]]).ravel(), minlength=nb * neg.size)
        cum = np.zeros((nb, neg.size + 1))
        np.cumsum(cnt_n.reshape(nb, neg.size), axis=1, out=cum[:, 1:])
        offp = (np.arange(nb) * pos.size)[:, None]
        cnt_p = np.bincount((offp + draw_p[b0:b1]).ravel(), minlength=nb * pos.size)
        cnt_p = cnt_p.reshape(nb, pos.size)
        below = np.take(cum, lo, axis=1)
        upto = np.take(cum, hi, axis=1)
        wins = (cnt_p * (below + 0.5 * (upto - below))).sum(axis=1)
        reps[b0:b1] = wins / (pos.size * neg.size)
    alpha = (1.0 - level) / 2.0
    q_lo, q_hi = np.quantile(reps, [alpha, 1.0 - alpha])
    return Interval(est, float(q_lo), float(q_hi), level)

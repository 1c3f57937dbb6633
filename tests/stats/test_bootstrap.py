"""The public ``bootstrap_auroc`` (the fast one) equals the straightforward stratified
bootstrap, which lives here as the reference, draw for draw."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import rankdata

from toolaudit.stats import Interval, auroc, bootstrap_auroc


def reference_bootstrap_auroc(
    y: np.ndarray, score: np.ndarray, *, n_boot: int, level: float = 0.95, seed: int = 0
) -> Interval:
    """Resample positives and negatives separately, rank each replicate, Mann-Whitney U.

    The generator calls (positives' draws, then negatives') are the ones the public
    function makes, so each replicate is the same resample."""
    yb = np.asarray(y).astype(bool)
    s = np.asarray(score, dtype=float)
    est = auroc(yb, s)
    if np.isnan(est):
        return Interval(est, float("nan"), float("nan"), level)
    rng = np.random.default_rng(seed)
    pos, neg = np.flatnonzero(yb), np.flatnonzero(~yb)
    ip = pos[rng.integers(0, pos.size, size=(n_boot, pos.size))]
    ineg = neg[rng.integers(0, neg.size, size=(n_boot, neg.size))]
    reps = np.empty(n_boot)
    for b in range(n_boot):
        ranks = rankdata(np.concatenate([s[ip[b]], s[ineg[b]]]))
        u = ranks[: pos.size].sum() - pos.size * (pos.size + 1) / 2.0
        reps[b] = u / (pos.size * neg.size)
    alpha = (1.0 - level) / 2.0
    lo, hi = np.quantile(reps, [alpha, 1.0 - alpha])
    return Interval(est, float(lo), float(hi), level)


@pytest.mark.parametrize("seed", [0, 7])
def test_bootstrap_auroc_equals_the_reference_draw_for_draw_with_ties(seed: int) -> None:
    rng = np.random.default_rng(seed)
    y = (rng.random(300) < 0.2).astype(int)
    s = np.round(rng.random(300) + 0.3 * y, 1)  # many ties
    a = reference_bootstrap_auroc(y, s, n_boot=400, seed=seed)
    b = bootstrap_auroc(y, s, n_boot=400, seed=seed)
    assert a.estimate == b.estimate
    assert abs(a.low - b.low) < 1e-12 and abs(a.high - b.high) < 1e-12


def test_bootstrap_auroc_single_class_is_undefined() -> None:
    iv = bootstrap_auroc([1, 1, 1], [0.1, 0.2, 0.3])
    assert np.isnan(iv.estimate) and np.isnan(iv.low)

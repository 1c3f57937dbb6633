"""The fast stratified bootstrap equals toolaudit.stats.bootstrap_auroc draw for draw."""

from __future__ import annotations

import numpy as np
import pytest

from toolaudit.stats import bootstrap_auroc
from toolaudit.stats._bootstrap_fast import bootstrap_auroc_fast


@pytest.mark.parametrize("seed", [0, 7])
def test_bootstrap_auroc_fast_equals_reference_with_ties(seed):
    rng = np.random.default_rng(seed)
    y = (rng.random(400) < 0.2).astype(int)
    s = np.round(rng.random(400) + 0.3 * y, 1)  # many ties
    a = bootstrap_auroc(y, s, n_boot=500, seed=seed)
    b = bootstrap_auroc_fast(y, s, n_boot=500, seed=seed)
    assert a.estimate == b.estimate
    assert abs(a.low - b.low) < 1e-12 and abs(a.high - b.high) < 1e-12


def test_bootstrap_auroc_fast_single_class_is_undefined():
    iv = bootstrap_auroc_fast([1, 1, 1], [0.1, 0.2, 0.3])
    assert np.isnan(iv.estimate) and np.isnan(iv.low)

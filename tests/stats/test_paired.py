"""The vectorised cluster bootstrap agrees with the generic one."""

from __future__ import annotations

import numpy as np
import pytest

from toolaudit.stats import cluster_bootstrap
from toolaudit.stats._paired import cluster_mean_bootstrap


@pytest.mark.parametrize("seed", [0, 7])
def test_cluster_mean_bootstrap_matches_cluster_bootstrap(seed: int) -> None:
    rng = np.random.default_rng(seed)
    clusters = [f"t{i % 9}" for i in range(60)]
    values = rng.random(60)
    values[[2, 11]] = np.nan

    def stat(idx: np.ndarray) -> float:
        v = values[idx]
        v = v[~np.isnan(v)]
        return float(v.mean()) if v.size else float("nan")

    ref = cluster_bootstrap(clusters, stat, n_boot=300, level=0.9, seed=seed)
    got = cluster_mean_bootstrap(clusters, values, n_boot=300, level=0.9, seed=seed)
    assert got.estimate == pytest.approx(ref.estimate, abs=1e-12)
    assert got.low == pytest.approx(ref.low, abs=1e-12)
    assert got.high == pytest.approx(ref.high, abs=1e-12)


def test_cluster_mean_bootstrap_interval_widens_with_level() -> None:
    values = np.random.default_rng(1).random(50)
    clusters = [i % 10 for i in range(50)]
    narrow = cluster_mean_bootstrap(clusters, values, level=0.5, seed=2)
    wide = cluster_mean_bootstrap(clusters, values, level=0.95, seed=2)
    assert wide.low <= narrow.low and narrow.high <= wide.high


def test_cluster_mean_bootstrap_all_missing_is_nan() -> None:
    iv = cluster_mean_bootstrap(["a", "b"], [np.nan, np.nan])
    assert np.isnan(iv.estimate) and np.isnan(iv.low)

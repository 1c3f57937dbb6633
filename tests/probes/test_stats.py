"""Corrected equivalence, task-level comparisons and pass^k (the seed's statistics)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from toolaudit.probes import Replicates, cluster_mean_replicates, pass_hat_k
from toolaudit.probes.analysis._stats import corrected_equivalence
from toolaudit.stats._paired import cluster_mean_bootstrap


def test_cluster_mean_replicates_match_cluster_mean_bootstrap_intervals() -> None:
    rng = np.random.default_rng(1)
    clusters = [f"t{i % 9}" for i in range(40)]
    values = rng.normal(size=40)
    reps = cluster_mean_replicates(clusters, values, n_boot=500, seed=3)
    for level in (0.90, 0.95):
        ref = cluster_mean_bootstrap(clusters, values, n_boot=500, level=level, seed=3)
        got = reps.interval(level)
        assert got.estimate == pytest.approx(ref.estimate)
        assert (got.low, got.high) == pytest.approx((ref.low, ref.high), abs=1e-9)


def test_tost_p_agrees_with_ninety_percent_interval_rule() -> None:
    rng = np.random.default_rng(0)
    for centre in np.linspace(-0.2, 0.2, 21):
        r = Replicates(float(centre), rng.normal(centre, 0.03, size=4000))
        iv = r.interval(0.90)
        inside = -0.10 < iv.low and iv.high < 0.10
        assert (r.tost_p(0.10) < 0.05) == inside, centre


def test_corrected_equivalence_bonferroni_and_holm_are_stricter() -> None:
    rng = np.random.default_rng(2)
    # Three comparisons whose 90% intervals lie inside ±0.10 but whose tails are heavy
    # enough that the Bonferroni interval (1 - 2·0.05/3) crosses the band for one.
    fam = [
        Replicates(0.0, rng.normal(0.0, 0.02, size=5000)),
        Replicates(0.05, rng.normal(0.05, 0.026, size=5000)),
        Replicates(0.0, rng.normal(0.0, 0.02, size=5000)),
    ]
    out = corrected_equivalence(fam, margin=0.10)
    assert [o["equivalence"] for o in out] == ["equivalent"] * 3
    assert out[1]["equivalence_bonferroni"] != "equivalent"
    assert out[1]["bonferroni_level"] == pytest.approx(1 - 0.1 / 3)
    # Holm is never stricter than Bonferroni.
    for o in out:
        if o["equivalence_bonferroni"] == "equivalent":
            assert o["equivalence_holm"] == "equivalent"
    assert all(o["family_size"] == 3 for o in out)


def test_corrected_equivalence_detects_a_real_difference() -> None:
    rng = np.random.default_rng(3)
    out = corrected_equivalence([Replicates(0.3, rng.normal(0.3, 0.03, size=3000))], margin=0.1)
    assert out[0]["equivalence"] == "different" == out[0]["equivalence_holm"]
    assert out[0]["diff_p"] == 0.0 and out[0]["tost_p"] == 1.0


def test_pass_hat_k_tau2_formula_and_partial_k() -> None:
    got = pass_hat_k({"a": [True, True, False], "b": [True, False], "c": [False, False]})
    # k=1: (2/3 + 1/2 + 0)/3; k=2: (C(2,2)/C(3,2) + 0 + 0)/3 = (1/3)/3.
    assert got["pass_hat_k"]["1"] == pytest.approx((2 / 3 + 1 / 2) / 3)
    assert got["pass_hat_k"]["2"] == pytest.approx(1 / 9)
    assert got["max_k"] == 2 and "3" not in got["pass_hat_k"]
    assert got["pass_hat_k_partial"]["3"] == {"value": 0.0, "n_tasks": 1}
    assert math.isclose(got["pass_hat_k_partial"]["2"]["value"], 1 / 9)

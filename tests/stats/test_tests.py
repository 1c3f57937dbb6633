import math

import numpy as np
import pytest
from scipy.stats import binomtest

from toolaudit.stats import (
    Interval,
    bonferroni,
    cluster_bootstrap,
    cohen_kappa,
    equivalence_verdict,
    holm,
    mcnemar_exact,
    sign_test,
)


def test_sign_test_drops_zeros_and_matches_binomial():
    d = [1, 2, 3, 0, 0, -1, 4, 5]
    assert sign_test(d) == pytest.approx(binomtest(5, 6, 0.5).pvalue)
    assert math.isnan(sign_test([0, 0]))


def test_mcnemar_exact_symmetric_and_one_when_no_discordance():
    assert mcnemar_exact(3, 10) == pytest.approx(mcnemar_exact(10, 3))
    assert mcnemar_exact(0, 0) == 1.0
    assert mcnemar_exact(0, 10) == pytest.approx(2 * 0.5**10)


def test_holm_known_answer():
    # Textbook example: p = (0.01, 0.04, 0.03) -> Holm (0.03, 0.06, 0.06).
    assert holm([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.06, 0.06])


def test_holm_never_exceeds_bonferroni():
    rng = np.random.default_rng(0)
    p = rng.random(12).tolist()
    assert all(h <= b + 1e-12 for h, b in zip(holm(p), bonferroni(p), strict=True))


def test_cohen_kappa_known_answer():
    # 2x2 table [[20, 5], [10, 15]]: po = 0.7, pe = 0.5 -> kappa 0.4.
    a = [1] * 25 + [0] * 25
    b = [1] * 20 + [0] * 5 + [1] * 10 + [0] * 15
    assert cohen_kappa(a, b) == pytest.approx(0.4)
    assert cohen_kappa(a, a) == 1.0
    assert np.isnan(cohen_kappa(["x", "x"], ["x", "x"]))  # one label: undefined


def test_cluster_bootstrap_resamples_whole_clusters():
    # Within-cluster values are identical, so each replicate mean is a mean of cluster
    # values: with two clusters (0 and 1) the interval is inside [0, 1] and the estimate 0.5.
    values = np.array([0.0] * 10 + [1.0] * 10)
    clusters = ["a"] * 10 + ["b"] * 10
    ci = cluster_bootstrap(clusters, lambda idx: float(values[idx].mean()), n_boot=200, seed=0)
    assert ci.estimate == 0.5
    assert 0.0 <= ci.low <= ci.high <= 1.0


def test_equivalence_verdicts():
    assert equivalence_verdict(Interval(0.0, -0.05, 0.05, 0.9)).verdict == "equivalent"
    assert equivalence_verdict(Interval(0.3, 0.2, 0.4, 0.9)).verdict == "different"
    assert equivalence_verdict(Interval(0.0, -0.2, 0.2, 0.9)).verdict == "inconclusive"


def test_holm_reject_matches_the_step_down_rule():
    from toolaudit.stats import holm_reject

    # sorted p 0.01 < 0.05/3, 0.02 < 0.05/2, 0.04 < 0.05/1: all rejected
    assert holm_reject([0.04, 0.01, 0.02], 0.05) == [True, True, True]
    # 0.03 > 0.05/2 stops the procedure: only the smallest is rejected
    assert holm_reject([0.01, 0.03, 0.04], 0.05) == [True, False, False]
    assert holm_reject([float("nan"), 0.001], 0.05) == [False, True]

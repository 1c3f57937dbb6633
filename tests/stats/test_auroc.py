import numpy as np
import pytest
from sklearn.metrics import roc_auc_score

from toolaudit.stats import (
    auroc,
    bootstrap_auroc,
    group_permutation_auroc,
    paired_bootstrap_auroc_delta,
    paired_permutation_auroc,
)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_auroc_matches_sklearn_with_ties(seed):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, 300)
    s = rng.integers(0, 5, 300).astype(float) + y * 0.5
    assert auroc(y, s) == pytest.approx(roc_auc_score(y, s), abs=1e-12)


def test_auroc_single_class_is_nan():
    assert np.isnan(auroc([1, 1, 1], [0.1, 0.2, 0.3]))


def test_bootstrap_auroc_interval_contains_estimate_and_widens_with_level():
    rng = np.random.default_rng(3)
    y = rng.integers(0, 2, 400)
    s = rng.normal(size=400) + y
    narrow = bootstrap_auroc(y, s, level=0.80, seed=1)
    wide = bootstrap_auroc(y, s, level=0.99, seed=1)
    assert narrow.low <= narrow.estimate <= narrow.high
    assert wide.low < narrow.low and wide.high > narrow.high


def test_bootstrap_auroc_width_agrees_with_hanley_mcneil():
    # Hanley & McNeil (1982) standard error of the AUROC; the bootstrap should be close.
    rng = np.random.default_rng(5)
    n1, n0 = 500, 500
    y = np.r_[np.ones(n1), np.zeros(n0)]
    s = np.r_[rng.normal(1, 1, n1), rng.normal(0, 1, n0)]
    a = auroc(y, s)
    q1, q2 = a / (2 - a), 2 * a * a / (1 + a)
    se = np.sqrt((a * (1 - a) + (n1 - 1) * (q1 - a * a) + (n0 - 1) * (q2 - a * a)) / (n1 * n0))
    ci = bootstrap_auroc(y, s, n_boot=3000, seed=0)
    assert (ci.high - ci.low) / (2 * 1.96) == pytest.approx(se, rel=0.15)


def test_bootstrap_auroc_same_seed_same_interval():
    y = [0, 1] * 50
    s = np.linspace(0, 1, 100)
    assert bootstrap_auroc(y, s, seed=7) == bootstrap_auroc(y, s, seed=7)


def test_paired_delta_zero_for_identical_scores():
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 200)
    s = rng.normal(size=200) + y
    d = paired_bootstrap_auroc_delta(y, s, s, seed=0)
    assert d.estimate == 0 and d.low == 0 and d.high == 0


@pytest.mark.parametrize("seed", [0, 3])
def test_paired_delta_equals_resampling_and_ranking(seed):
    """The counted replicates equal the straightforward paired bootstrap (the same
    stratified draws, each replicate resampled and ranked with ties), bit for bit."""
    from scipy.stats import rankdata

    rng = np.random.default_rng(seed)
    y = (rng.random(300) < 0.2).astype(int)
    a = np.round(rng.normal(size=300) + y, 1)  # rounded: many ties
    b = np.round(rng.normal(size=300), 1)
    got = paired_bootstrap_auroc_delta(y, a, b, n_boot=300, seed=seed, level=0.9)
    draws = np.random.default_rng(seed)
    pos, neg = np.flatnonzero(y == 1), np.flatnonzero(y == 0)
    idx = np.concatenate(
        [
            pos[draws.integers(0, pos.size, size=(300, pos.size))],
            neg[draws.integers(0, neg.size, size=(300, neg.size))],
        ],
        axis=1,
    )

    def rep(s: np.ndarray) -> np.ndarray:
        out = []
        for row in idx:
            r = rankdata(s[row])
            u = r[: pos.size].sum() - pos.size * (pos.size + 1) / 2.0
            out.append(u / (pos.size * neg.size))
        return np.array(out)

    lo, hi = np.quantile(rep(a) - rep(b), [0.05, 0.95])
    assert (got.low, got.high) == (float(lo), float(hi))


def test_paired_delta_detects_real_difference():
    rng = np.random.default_rng(1)
    y = rng.integers(0, 2, 600)
    good = rng.normal(size=600) + 1.5 * y
    noise = rng.normal(size=600)
    d = paired_bootstrap_auroc_delta(y, good, noise, seed=0)
    assert d.low > 0.2
    assert paired_permutation_auroc(y, good, noise, n_perm=500, seed=0) < 0.01


def test_paired_permutation_is_uniformish_under_null():
    rng = np.random.default_rng(2)
    y = rng.integers(0, 2, 200)
    a = rng.normal(size=200)
    b = rng.normal(size=200)
    p = paired_permutation_auroc(y, a, b, n_perm=500, seed=0)
    assert 0.01 < p <= 1.0


def _brute_group_null(y, s, g, n_perm, seed):
    """Permute labels within each group and score with scikit-learn."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n_perm):
        yy = y.copy()
        for label in np.unique(g):
            m = np.flatnonzero(g == label)
            yy[m] = rng.permutation(y[m])
        out.append(roc_auc_score(yy, s))
    return np.array(out)


def test_group_null_matches_brute_force_permutations():
    rng = np.random.default_rng(7)
    g = np.repeat(np.array(["a", "b", "c"]), [40, 50, 30])
    y = (rng.random(120) < np.where(g == "b", 0.5, 0.1)).astype(int)
    s = np.round(rng.normal(size=120) + (g == "b") * 0.8, 1)  # ties on purpose
    r = group_permutation_auroc(y, s, g, n_perm=4000, seed=0)
    brute = _brute_group_null(y, s, g, 4000, 1)
    assert r.estimate == pytest.approx(roc_auc_score(y, s), abs=1e-12)
    # same distribution (different draws): means and quantiles agree to Monte Carlo error
    assert r.null_mean == pytest.approx(brute.mean(), abs=0.004)
    assert r.low == pytest.approx(np.quantile(brute, 0.025), abs=0.02)
    assert r.high == pytest.approx(np.quantile(brute, 0.975), abs=0.02)


def test_group_null_centres_label_free_scores_away_from_half():
    # a model that scores the high-prevalence group low: label-free, yet the pooled
    # AUROC is far below 0.5 and its plain bootstrap interval excludes 0.5
    rng = np.random.default_rng(3)
    g = np.repeat(np.array(["low", "high"]), [3000, 1000])
    y = (rng.random(4000) < np.where(g == "high", 0.12, 0.04)).astype(int)
    s = rng.normal(size=4000) - 0.6 * (g == "high")
    plain = bootstrap_auroc(y, s, seed=0)
    r = group_permutation_auroc(y, s, g, n_perm=2000, seed=0)
    assert plain.high < 0.5
    assert r.high < 0.5 and r.low <= r.estimate <= r.high
    assert r.p_value > 0.05


def test_group_null_detects_within_group_signal_and_is_seeded():
    rng = np.random.default_rng(4)
    g = np.repeat(np.array(["a", "b"]), [500, 500])
    y = rng.integers(0, 2, 1000)
    s = rng.normal(size=1000) + 0.4 * y
    r = group_permutation_auroc(y, s, g, n_perm=1000, seed=5)
    assert r.p_value < 0.01 and r.estimate > r.high
    assert r == group_permutation_auroc(y, s, g, n_perm=1000, seed=5)
    assert r.null_mean == pytest.approx(0.5, abs=0.01)


def test_group_null_single_class_and_length_mismatch():
    r = group_permutation_auroc([1, 1, 1], [0.1, 0.2, 0.3], ["a", "a", "b"])
    assert np.isnan(r.estimate) and np.isnan(r.p_value)
    with pytest.raises(ValueError, match="same length"):
        group_permutation_auroc([0, 1], [0.1, 0.2, 0.3], ["a", "a", "b"])


def _exact_paired_p(y, a, b):
    """The exact two-sided p-value: every one of the 2^n swap patterns, by brute force."""
    from itertools import product

    from sklearn.metrics import roc_auc_score

    y, a, b = np.asarray(y), np.asarray(a, float), np.asarray(b, float)
    observed = abs(roc_auc_score(y, a) - roc_auc_score(y, b))
    hits = total = 0
    for pattern in product([False, True], repeat=len(y)):
        swap = np.array(pattern)
        pa, pb = np.where(swap, b, a), np.where(swap, a, b)
        hits += abs(roc_auc_score(y, pa) - roc_auc_score(y, pb)) >= observed - 1e-12
        total += 1
    return hits / total


def test_paired_permutation_one_changed_row_among_ties_is_not_significant():
    """A variant identical to the original but for one row, with heavy ties (the case
    that came out at p = 0.001 when each variant was ranked separately)."""
    rng = np.random.default_rng(3)
    y = np.array([1] * 13 + [0] * 232)
    original = np.where(y == 1, 0.9, 0.1) + rng.normal(0, 0.01, y.size)
    variant = original.copy()
    variant[0] = 0.5
    p = paired_permutation_auroc(y, original, variant, n_perm=2000, seed=0)
    assert p > 0.3
    flat = np.full(y.size, 0.5)  # every score tied in the variant: a real, large change
    assert paired_permutation_auroc(y, original, flat, n_perm=2000, seed=0) < 0.01


def test_paired_permutation_matches_the_exact_enumeration_on_small_inputs():
    rng = np.random.default_rng(4)
    for trial in range(4):
        y = np.array([0, 1] * 5)
        a = np.round(rng.normal(size=10) + y, 1)
        b = np.round(rng.normal(size=10) + 0.3 * y, 1)  # rounding makes ties
        b[:3] = a[:3]  # three rows unchanged
        exact = _exact_paired_p(y, a, b)
        p = paired_permutation_auroc(y, a, b, n_perm=20000, seed=trial)
        assert abs(p - exact) < 0.02, (trial, p, exact)


def test_paired_permutation_identical_scores_give_one():
    y = [0, 1, 0, 1, 1]
    s = [0.2, 0.7, 0.2, 0.7, 0.1]
    assert paired_permutation_auroc(y, s, s, n_perm=200) == 1.0

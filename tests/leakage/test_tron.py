"""The in-place trust-region solver against scikit-learn's liblinear (the reference).

The solver repeats liblinear's floating-point operations in liblinear's order (rows
grouped by class, the same BLAS routines), so coefficients and scores are compared for
equality, not within a tolerance."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.linear_model import LogisticRegression

from toolaudit.leakage import FEATURE_SETS, LRSpec, PT2DEngine
from toolaudit.leakage._features import fit_and_score
from toolaudit.leakage._tron import class_grouped, fit_l2r_lr
from toolaudit.stats import auroc


def _sklearn(x: sp.csr_matrix, y: np.ndarray, **kw: object) -> LogisticRegression:
    params = {"solver": "liblinear", "max_iter": 4000, "random_state": 0, **kw}
    return LogisticRegression(**params).fit(x, y)  # type: ignore[arg-type]


def _random_problem(seed: int, n: int = 1500, m: int = 800) -> tuple[sp.csr_matrix, np.ndarray]:
    rng = np.random.default_rng(seed)
    x = sp.random(n, m, density=0.02, format="csr", random_state=seed, dtype=np.float64)
    x.data = rng.random(x.nnz)
    x.indices = x.indices.astype(np.int32)
    x.sort_indices()
    beta = rng.normal(size=m) * 3
    s = x @ beta + rng.normal(size=n)
    return x, (s > np.quantile(s, 0.8)).astype(int)


@pytest.mark.parametrize("class_weight", ["balanced", None])
@pytest.mark.parametrize("C", [0.1, 1.0, 10.0])
def test_same_coefficients_and_iterations_as_liblinear(class_weight, C):
    x, y = _random_problem(seed=int(C * 10) + (class_weight is None))
    ref = _sklearn(x, y, C=C, class_weight=class_weight)
    fit = fit_l2r_lr(x, y, C=C, class_weight=class_weight, max_iter=4000)
    assert fit.n_iter == int(ref.n_iter_[0])
    np.testing.assert_array_equal(fit.coef, ref.coef_.ravel())
    assert fit.intercept == float(ref.intercept_[0])
    a, b = ref.decision_function(x), fit.decision_function(x)
    np.testing.assert_array_equal(b, a)
    assert auroc(y, a) == auroc(y, b)


def test_labels_other_than_zero_one_and_empty_rows():
    x, y01 = _random_problem(seed=3, n=400, m=300)
    x = sp.vstack([x, sp.csr_matrix((20, 300))], format="csr")  # rows without features
    y = np.where(np.concatenate([y01, np.zeros(20, dtype=int)]) == 1, 7, -2)
    ref = _sklearn(x, y, class_weight="balanced")
    fit = fit_l2r_lr(x, y, class_weight="balanced", max_iter=4000)  # rows reordered: a copy
    np.testing.assert_array_equal(fit.coef, ref.coef_.ravel())
    np.testing.assert_array_equal(fit.decision_function(x), ref.decision_function(x))


def test_max_iter_stops_early_like_liblinear():
    x, y = _random_problem(seed=5)
    ref = _sklearn(x, y, class_weight="balanced", max_iter=2)
    fit = fit_l2r_lr(x, y, class_weight="balanced", max_iter=2)
    assert fit.n_iter == 2
    np.testing.assert_array_equal(fit.coef, ref.coef_.ravel())


def test_one_class_is_an_error():
    x, _ = _random_problem(seed=1, n=50, m=20)
    with pytest.raises(ValueError, match="two classes"):
        fit_l2r_lr(x, np.ones(50, dtype=int))


@pytest.mark.parametrize("name", ["word_1_2", "char_wb_3_5"])
def test_audit_designs_score_as_with_liblinear(tcr_small, name):
    """The audit's own fits (controlled benchmark, full trace and the carrier tool, fit
    rows grouped by class as the audit builds them): the same scores, AUROC and top
    coefficients as scikit-learn's liblinear on the rows in their original order."""
    spec = FEATURE_SETS[name]
    engine = PT2DEngine(tcr_small, [spec])
    fit = np.array([i for i, e in enumerate(tcr_small) if e.split == "train"])
    ev = np.array([i for i, e in enumerate(tcr_small) if e.split == "test"])
    y = np.array([e.label for e in tcr_small])
    grouped = class_grouped(fit, y)
    assert not np.array_equal(grouped, fit)  # the reorder is exercised
    for scope in ["full", "thermompnn_ddg"]:
        counts = engine.counts(spec.analyzer, engine.scope_tools(scope))
        d = engine.design(counts, spec, grouped, ev)
        ours = fit_and_score(d.x_fit, y[grouped], d.x_eval, LRSpec(), top_k=10)
        plain = engine.design(counts, spec, fit, ev)
        ref = LRSpec().make().fit(plain.x_fit.tocsr(), y[fit])
        ref_scores = ref.decision_function(plain.x_eval)
        np.testing.assert_array_equal(ours.scores, ref_scores)
        assert auroc(y[ev], ours.scores) == auroc(y[ev], ref_scores)
        order = np.argsort(ref.coef_.ravel(), kind="stable")
        assert [i for i, _ in ours.top_pos] == [
            int(i) for i in order[::-1][:10] if ref.coef_.ravel()[i] > 0
        ]


def test_warm_start_keeps_the_stopping_rule():
    """A warm start at the solution stops at once (the rule is relative to the gradient
    at 0, not at the start); from elsewhere it reaches the same tolerance."""
    x, y = _random_problem(seed=7)
    x = x[class_grouped(np.arange(y.size), y)]
    y = np.sort(y)
    cold = fit_l2r_lr(x, y, max_iter=4000)
    again = fit_l2r_lr(x, y, max_iter=4000, warm=(cold.coef, cold.intercept))
    assert again.n_iter == 0
    np.testing.assert_array_equal(again.coef, cold.coef)
    assert again.intercept == cold.intercept
    shifted = fit_l2r_lr(x, y, max_iter=4000, warm=(cold.coef * 0.5, 0.0))
    assert shifted.n_iter >= 1
    np.testing.assert_allclose(shifted.coef, cold.coef, atol=1e-3)

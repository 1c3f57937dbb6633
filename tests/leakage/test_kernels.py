"""The compiled kernels against scipy and scikit-learn, bit for bit, for any threads."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.sparse as sp

from toolaudit.leakage import FEATURE_SETS, PT2DEngine
from toolaudit.leakage._features import idf_weights, restrict, tfidf
from toolaudit.leakage._kernels import (
    column_splits,
    dots,
    lr_gradient_weights,
    lr_objective,
    row_splits,
    scatter,
)


def _matrix(seed: int = 0, n: int = 300, m: int = 500) -> sp.csr_matrix:
    x = sp.random(n, m, density=0.05, format="csr", random_state=seed, dtype=np.float64)
    x = sp.vstack([x[:5], sp.csr_matrix((1, m)), x[6:]], format="csr")  # an empty row
    x.sort_indices()
    return x


@pytest.mark.parametrize("threads", [1, 2, 3, 7])
def test_products_equal_scipy_bit_for_bit(threads):
    x = _matrix()
    rng = np.random.default_rng(1)
    v, w = rng.normal(size=x.shape[1]), rng.normal(size=x.shape[0])
    ptr = x.indptr.astype(np.int64)
    idx = x.indices.astype(np.int32)
    out = np.empty(x.shape[0])
    dots(x.data, idx, ptr, v, row_splits(ptr, threads), out)
    assert np.array_equal(out, x @ v)
    _, at = column_splits(ptr, idx, x.shape[1], threads)
    out_t = np.empty(x.shape[1])
    scatter(x.data, idx, w, at, out_t)
    assert np.array_equal(out_t, x.T @ w)


def test_loss_and_gradient_weights_use_the_c_library():
    rng = np.random.default_rng(2)
    y = np.where(rng.random(500) < 0.3, 1.0, -1.0)
    z = rng.normal(size=500) * 4
    c = rng.random(500) + 0.5
    f = 0.25
    for yi, zi, ci in zip(y, z, c, strict=True):
        yz = yi * zi
        f += ci * (math.log(1 + math.exp(-yz)) if yz >= 0 else -yz + math.log(1 + math.exp(yz)))
    assert lr_objective(y, z, c, 0.25) == f
    d, wa = np.empty(500), np.empty(500)
    lr_gradient_weights(y, z, c, d, wa)
    p = np.array([1 / (1 + math.exp(-a * b)) for a, b in zip(y, z, strict=True)])
    assert np.array_equal(d, p * (1 - p)) and np.array_equal(wa, c * (p - 1) * y)


@pytest.mark.parametrize("threads", [1, 2])
def test_designs_and_scores_equal_the_matrix_way(adversarial, threads):
    """TF-IDF rows written by the kernel equal restrict + tfidf (scikit-learn's
    operations) on the scope's counts; scores equal the matrix product."""
    spec = FEATURE_SETS["char_wb_3_5"]
    engine = PT2DEngine(adversarial, [spec], threads=threads)
    fit = np.arange(60)
    ev = np.arange(60, 90)
    source = engine.counts("char_wb", list(engine.tools))
    design = engine.design(source, spec, fit, ev, lazy_eval=True)
    counts, ids = source.count_matrix(np.arange(90))
    colmap = {t: i for i, t in enumerate(ids.tolist())}
    cols = np.array([colmap[t] for t in design.vocab.tolist()])
    c_fit = restrict(sp.csr_matrix(counts[fit], dtype=np.int32), cols)
    idf = idf_weights(c_fit)
    ref_fit = tfidf(c_fit, idf)
    x_fit = design.x_fit.tocsr()
    assert design.x_fit.indices.dtype == np.uint16  # 16-bit columns: a small vocabulary
    assert np.array_equal(x_fit.indptr, ref_fit.indptr)
    assert np.array_equal(x_fit.indices, ref_fit.indices)
    assert np.array_equal(x_fit.data, ref_fit.data)
    ref_ev = tfidf(restrict(sp.csr_matrix(counts[ev], dtype=np.int32), cols), idf)
    built = design.x_eval()
    assert np.array_equal(built.data, ref_ev.data) and np.array_equal(built.indices, ref_ev.indices)
    coef = np.random.default_rng(3).normal(size=design.vocab.size)
    assert np.array_equal(design.x_eval.scores(coef, 0.5), ref_ev @ coef + 0.5)
    blocks = sp.vstack(list(design.x_eval.blocks()), format="csr")
    assert abs(blocks - ref_ev).max() == 0


def test_design_with_a_wrong_count_is_refused(adversarial):
    spec = FEATURE_SETS["word_1_2"]
    engine = PT2DEngine(adversarial, [spec])
    source = engine.counts("word", list(engine.tools))
    df, _ = source.term_stats(np.arange(90))
    vocab = np.flatnonzero(df)
    restricted = source.restricted(vocab)
    with pytest.raises(RuntimeError, match="non-zeros"):
        restricted.matrix(np.arange(90), np.ones(vocab.size), nnz=int(df.sum()) - 1)
    assert restricted.matrix(np.arange(90), None).nnz == int(df.sum())

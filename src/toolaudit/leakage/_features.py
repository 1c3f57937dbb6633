"""Feature sets, the exact TfidfVectorizer reproduction, and the diagnostic classifier.

``select_vocabulary`` follows scikit-learn's ``CountVectorizer._limit_features``: terms are
first sorted by string, masked by document frequency, and when more than
``max_features`` survive the most frequent are kept with ``(-tfs[mask]).argsort()`` on
the string-sorted array (same dtype, same values, hence the same tie-breaking).
``tfidf`` follows ``TfidfTransformer``: smooth idf ``log((n+1)/(df+1)) + 1``, raw term
counts, l2 row norm.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

import numpy as np
import scipy.sparse as sp
from sklearn.linear_model import LogisticRegression
from sklearn.preprocessing import normalize

from toolaudit.errors import ConfigError
from toolaudit.leakage._tron import FitMatrix, fit_l2r_lr

AnalyzerName = Literal["word", "char_wb"]


@dataclass(frozen=True, slots=True)
class FeatureSpec:
    """One TF-IDF feature set (the arguments of ``TfidfVectorizer``)."""

    name: str
    analyzer: AnalyzerName
    ngram_range: tuple[int, int]
    max_features: int | None
    min_df: int | float = 3
    max_df: int | float = 1.0

    def vectorizer_kwargs(self) -> dict[str, Any]:
        """Keyword arguments for ``sklearn.feature_extraction.text.TfidfVectorizer``."""
        return {
            "analyzer": self.analyzer,
            "ngram_range": self.ngram_range,
            "max_features": self.max_features,
            "min_df": self.min_df,
            "max_df": self.max_df,
        }

    def with_min_df(self, min_df: int | float) -> FeatureSpec:
        """A copy with another ``min_df``."""
        return FeatureSpec(
            self.name, self.analyzer, self.ngram_range, self.max_features, min_df, self.max_df
        )


#: The seed's three feature sets (Appendix C).
FEATURE_SETS: dict[str, FeatureSpec] = {
    "word_1_2": FeatureSpec("word_1_2", "word", (1, 2), 30_000),
    "char_wb_2_5": FeatureSpec("char_wb_2_5", "char_wb", (2, 5), 60_000),
    "char_wb_3_5": FeatureSpec("char_wb_3_5", "char_wb", (3, 5), 50_000),
}


def feature_specs(names: list[str] | None) -> list[FeatureSpec]:
    """Feature specs by name (all three when ``names`` is None)."""
    if not names:
        return list(FEATURE_SETS.values())
    out = []
    for name in names:
        if name not in FEATURE_SETS:
            raise ConfigError.invalid("features", list(FEATURE_SETS), name)
        out.append(FEATURE_SETS[name])
    return out


def validate_spec(spec: FeatureSpec) -> None:
    """Reject settings the exact engine cannot reproduce."""
    lo, hi = spec.ngram_range
    if spec.analyzer == "word" and not (1 <= lo <= hi <= 2):
        raise ConfigError.invalid(
            f"{spec.name}.ngram_range", "word n-grams within (1, 2)", (lo, hi)
        )
    if spec.analyzer == "char_wb" and not (2 <= lo <= hi <= 8):
        raise ConfigError.invalid(f"{spec.name}.ngram_range", "char_wb within (2, 8)", (lo, hi))


@dataclass(frozen=True, slots=True)
class LRSpec:
    """The diagnostic logistic regression (the seed: C=1, liblinear, balanced, 4,000 iter)."""

    C: float = 1.0
    solver: str = "liblinear"
    class_weight: str | None = "balanced"
    max_iter: int = 4000
    random_state: int = 0

    def make(self) -> LogisticRegression:
        """A fresh estimator."""
        return LogisticRegression(
            C=self.C,
            solver=self.solver,
            class_weight=self.class_weight,
            max_iter=self.max_iter,
            random_state=self.random_state,
        )


def doc_count_bounds(spec: FeatureSpec, n_docs: int) -> tuple[float, float]:
    """(min, max) document counts as scikit-learn computes them."""
    low = spec.min_df if isinstance(spec.min_df, int) else spec.min_df * n_docs
    high = spec.max_df if isinstance(spec.max_df, int) else spec.max_df * n_docs
    return float(low), float(high)


def select_vocabulary(
    counts_fit: sp.csr_matrix,
    spec: FeatureSpec,
    *,
    string_order: Any,
    term_lengths: np.ndarray | None = None,
) -> np.ndarray:
    """Term ids of the fitted vocabulary, in column (string) order.

    ``string_order(ids)`` sorts term ids by their strings; ``term_lengths`` restricts
    char_wb terms to ``spec.ngram_range``.
    """
    n_docs, n_terms = counts_fit.shape
    df = np.bincount(counts_fit.indices, minlength=n_terms)
    return vocabulary_from_stats(
        df,
        lambda: np.asarray(counts_fit.sum(axis=0), dtype=np.float64).ravel(),
        n_docs,
        spec,
        string_order=string_order,
        term_lengths=term_lengths,
    )


def vocabulary_from_stats(
    df: np.ndarray,
    tfs: Callable[[], np.ndarray],
    n_docs: int,
    spec: FeatureSpec,
    *,
    string_order: Any,
    term_lengths: np.ndarray | None = None,
) -> np.ndarray:
    """``select_vocabulary`` from per-term document frequencies ``df`` and total counts
    (``tfs()``, float64, asked for only when ``max_features`` must cut), so that the
    counts matrix itself need not exist (the engine sums them over row blocks)."""
    n_terms = df.size
    low, high = doc_count_bounds(spec, n_docs)
    mask = (df > 0) & (df >= low) & (df <= high)
    if term_lengths is not None:
        lo, hi = spec.ngram_range
        lens = term_lengths[:n_terms]
        mask &= (lens >= lo) & (lens <= hi)
    cand = string_order(np.flatnonzero(mask))
    limit = spec.max_features
    if limit is not None and cand.size > limit:
        tf = tfs()
        keep = (-tf[cand]).argsort()[:limit]
        cand = cand[np.sort(keep)]
    return np.asarray(cand, dtype=np.int64)


#: Non-zeros handled per step by ``restrict`` and ``tfidf`` (bounds their temporaries).
_STEP_NNZ = 4_000_000


def restrict(counts: sp.csr_matrix, vocab: np.ndarray) -> sp.csr_matrix:
    """Columns ``vocab`` of ``counts`` (as float64), renumbered 0..len(vocab)-1.

    Works over row blocks of about ``_STEP_NNZ`` entries, so its temporaries stay small
    next to the input and the output."""
    colmap = np.full(counts.shape[1], -1, dtype=np.int64)
    colmap[vocab] = np.arange(vocab.size)
    n_rows = counts.shape[0]
    indptr_in = counts.indptr
    per_row = np.zeros(n_rows, dtype=np.int64)
    bounds = _row_blocks(indptr_in)
    for a, b in bounds:  # pass 1: kept entries per row
        lo, hi = int(indptr_in[a]), int(indptr_in[b])
        keep = colmap[counts.indices[lo:hi]] >= 0
        rows = np.repeat(np.arange(a, b), np.diff(indptr_in[a : b + 1]))
        per_row += np.bincount(rows[keep], minlength=n_rows)
    indptr = np.zeros(n_rows + 1, dtype=np.int64)
    np.cumsum(per_row, out=indptr[1:])
    data = np.empty(int(indptr[-1]), dtype=np.float64)
    indices = np.empty(int(indptr[-1]), dtype=np.int32)
    for a, b in bounds:  # pass 2: copy them
        lo, hi = int(indptr_in[a]), int(indptr_in[b])
        new_col = colmap[counts.indices[lo:hi]]
        keep = new_col >= 0
        out0, out1 = int(indptr[a]), int(indptr[b])
        data[out0:out1] = counts.data[lo:hi][keep]
        indices[out0:out1] = new_col[keep]
    out = sp.csr_matrix((data, indices, indptr), shape=(n_rows, vocab.size))
    out.sort_indices()
    return out


def _row_blocks(indptr: np.ndarray) -> list[tuple[int, int]]:
    """Consecutive row ranges of about ``_STEP_NNZ`` entries each (at least one row)."""
    n_rows = indptr.size - 1
    out = []
    a = 0
    while a < n_rows:
        b = int(np.searchsorted(indptr, indptr[a] + _STEP_NNZ, side="right")) - 1
        b = min(max(b, a + 1), n_rows)
        out.append((a, b))
        a = b
    return out


def idf_weights(x_fit: sp.csr_matrix) -> np.ndarray:
    """Smoothed idf exactly as ``TfidfTransformer.fit`` computes it."""
    n_samples, n_features = x_fit.shape
    df = np.bincount(x_fit.indices, minlength=n_features).astype(np.float64)
    df += 1.0
    idf = np.full_like(df, fill_value=n_samples + 1, dtype=np.float64)
    idf /= df
    np.log(idf, out=idf)
    idf += 1.0
    return idf


def tfidf(x_counts: sp.csr_matrix, idf: np.ndarray, *, copy: bool = True) -> sp.csr_matrix:
    """Weight counts by ``idf`` and l2-normalize rows (``TfidfTransformer.transform``);
    ``copy=False`` works in place on a float64 matrix."""
    x = x_counts.copy() if copy else x_counts
    for lo in range(0, x.nnz, _STEP_NNZ):  # in steps: idf[indices] is 8 bytes per entry
        hi = min(lo + _STEP_NNZ, x.nnz)
        x.data[lo:hi] *= idf[x.indices[lo:hi]]
    return normalize(x, norm="l2", copy=False)


@dataclass(frozen=True, slots=True)
class FitOutput:
    """Scores of one diagnostic fit plus its extreme coefficients."""

    scores: np.ndarray
    top_pos: list[tuple[int, float]] = field(default_factory=list)
    top_neg: list[tuple[int, float]] = field(default_factory=list)


@runtime_checkable
class RowBlocks(Protocol):
    """A matrix built on demand in consecutive row blocks (the eval matrix)."""

    def blocks(self) -> Iterator[sp.csr_matrix]:
        """The matrix's rows, block after block."""
        ...


def _decision(
    decision: Callable[[sp.csr_matrix], np.ndarray],
    x_eval: sp.csr_matrix | Callable[[], sp.csr_matrix] | RowBlocks,
) -> np.ndarray:
    if isinstance(x_eval, RowBlocks):  # one block at a time: the whole never exists
        parts = [np.asarray(decision(b), dtype=np.float64) for b in x_eval.blocks()]
        return np.concatenate(parts) if parts else np.empty(0)
    if callable(x_eval):
        x_eval = x_eval()
    return np.asarray(decision(x_eval), dtype=np.float64)


def fit_and_score(
    x_fit: sp.csr_matrix | FitMatrix,
    y_fit: np.ndarray,
    x_eval: sp.csr_matrix | Callable[[], sp.csr_matrix] | RowBlocks,
    lr: LRSpec,
    *,
    top_k: int = 0,
    threads: int = 1,
) -> FitOutput:
    """Fit the diagnostic classifier and score ``x_eval`` with its decision function.

    ``x_eval`` may be a callable that builds the matrix, an object that builds it in
    row blocks (``RowBlocks``), or one that scores itself (``scores(coef, intercept)``,
    the engine's eval matrix, which is then never built): each is used after the fit,
    so the eval matrix and the fit's working memory never coexist. ``threads`` runs the
    solver's products in that many threads (same coefficients for any number). ``top_k``
    > 0 also returns the column indices and weights of the largest positive and
    negative coefficients.
    """
    coef: np.ndarray
    if lr.solver == "liblinear" and lr.class_weight in ("balanced", None):
        # liblinear's algorithm on the design itself, without liblinear's copy of it
        # (see toolaudit.leakage._tron): the same coefficients as scikit-learn's, bit for bit
        fit = fit_l2r_lr(
            x_fit,
            y_fit,
            C=lr.C,
            class_weight=lr.class_weight,
            max_iter=lr.max_iter,
            threads=threads,
        )
        scorer = getattr(x_eval, "scores", None)
        if callable(scorer):
            scores = scorer(fit.coef, fit.intercept)
        else:
            scores = _decision(fit.decision_function, x_eval)
        coef = fit.coef
    else:
        x = x_fit.tocsr() if isinstance(x_fit, FitMatrix) else x_fit
        model = lr.make().fit(x, y_fit)
        scores = _decision(model.decision_function, x_eval)
        coef = model.coef_.ravel()
    if top_k <= 0:
        return FitOutput(np.asarray(scores, dtype=np.float64))
    order = np.argsort(coef, kind="stable")
    pos = [(int(i), float(coef[i])) for i in order[::-1][:top_k] if coef[i] > 0]
    neg = [(int(i), float(coef[i])) for i in order[:top_k] if coef[i] < 0]
    return FitOutput(np.asarray(scores, dtype=np.float64), pos, neg)


def min_df_for(n_fit: int, spec: FeatureSpec) -> int | float:
    """``spec.min_df`` unless the fit partition is too small for it (then 1)."""
    low, high = doc_count_bounds(spec, n_fit)
    if n_fit == 0 or low > n_fit or high < low:
        return 1
    return spec.min_df if not isinstance(spec.min_df, float) else max(spec.min_df, 0.0)


def is_finite(value: float) -> bool:
    """Whether a float is a real number (not NaN/inf)."""
    return not (math.isnan(value) or math.isinf(value))

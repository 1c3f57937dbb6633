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
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import scipy.sparse as sp
from sklearn.linear_model import LogisticRegression
from sklearn.preprocessing import normalize

from toolaudit.errors import ConfigError

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
    low, high = doc_count_bounds(spec, n_docs)
    df = np.bincount(counts_fit.indices, minlength=n_terms)
    mask = (df > 0) & (df >= low) & (df <= high)
    if term_lengths is not None:
        lo, hi = spec.ngram_range
        lens = term_lengths[:n_terms]
        mask &= (lens >= lo) & (lens <= hi)
    cand = string_order(np.flatnonzero(mask))
    limit = spec.max_features
    if limit is not None and cand.size > limit:
        tfs = np.asarray(counts_fit.sum(axis=0), dtype=np.float64).ravel()
        keep = (-tfs[cand]).argsort()[:limit]
        cand = cand[np.sort(keep)]
    return np.asarray(cand, dtype=np.int64)


def restrict(counts: sp.csr_matrix, vocab: np.ndarray) -> sp.csr_matrix:
    """Columns ``vocab`` of ``counts`` (as float64), renumbered 0..len(vocab)-1."""
    colmap = np.full(counts.shape[1], -1, dtype=np.int64)
    colmap[vocab] = np.arange(vocab.size)
    new_col = colmap[counts.indices]
    keep = new_col >= 0
    rows = np.repeat(np.arange(counts.shape[0]), np.diff(counts.indptr))
    indptr = np.zeros(counts.shape[0] + 1, dtype=np.int64)
    indptr[1:] = np.cumsum(np.bincount(rows[keep], minlength=counts.shape[0]))
    out = sp.csr_matrix(
        (counts.data[keep].astype(np.float64), new_col[keep].astype(np.int32), indptr),
        shape=(counts.shape[0], vocab.size),
    )
    out.sort_indices()
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
    x.data *= idf[x.indices]
    return normalize(x, norm="l2", copy=False)


@dataclass(frozen=True, slots=True)
class FitOutput:
    """Scores of one diagnostic fit plus its extreme coefficients."""

    scores: np.ndarray
    top_pos: list[tuple[int, float]] = field(default_factory=list)
    top_neg: list[tuple[int, float]] = field(default_factory=list)


def fit_and_score(
    x_fit: sp.csr_matrix,
    y_fit: np.ndarray,
    x_eval: sp.csr_matrix | Callable[[], sp.csr_matrix],
    lr: LRSpec,
    *,
    top_k: int = 0,
) -> FitOutput:
    """Fit the diagnostic classifier and score ``x_eval`` with its decision function.

    ``x_eval`` may be a callable that builds the matrix: it is called after the fit, so
    the eval matrix and liblinear's copy of the fit matrix never coexist. ``top_k`` > 0
    also returns the column indices and weights of the largest positive and negative
    coefficients.
    """
    model = lr.make().fit(x_fit, y_fit)
    if callable(x_eval):
        x_eval = x_eval()
    scores = model.decision_function(x_eval)
    if top_k <= 0:
        return FitOutput(np.asarray(scores, dtype=np.float64))
    coef = model.coef_.ravel()
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

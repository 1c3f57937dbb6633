"""The straightforward scikit-learn pipeline: re-vectorize the text of every scope.

This is what PT2D's engine must reproduce exactly; the exactness tests and
``benchmarks/pt2d_speed.py`` compare against it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from sklearn.feature_extraction.text import TfidfVectorizer

from toolaudit.leakage._features import FeatureSpec, LRSpec
from toolaudit.traces import Example


@dataclass(frozen=True, slots=True)
class ReferenceFit:
    """The fitted vectorizer's vocabulary (column order), matrices and eval scores."""

    vocabulary: list[str]
    x_fit: sp.csr_matrix
    x_eval: sp.csr_matrix
    scores: np.ndarray


def reference_fit(
    examples: Sequence[Example],
    tools: Sequence[str] | None,
    spec: FeatureSpec,
    lr: LRSpec,
    fit: np.ndarray,
    ev: np.ndarray,
) -> ReferenceFit:
    """Vectorize ``Example.trace(tools)`` with ``TfidfVectorizer``, fit, score ``ev``."""
    docs = [ex.trace(tools=list(tools) if tools is not None else None) for ex in examples]
    vec = TfidfVectorizer(**spec.vectorizer_kwargs())
    x_fit = vec.fit_transform([docs[i] for i in fit])
    x_eval = vec.transform([docs[i] for i in ev])
    y = np.array([examples[i].label for i in fit])
    model = lr.make().fit(x_fit, y)
    vocab = sorted(vec.vocabulary_, key=vec.vocabulary_.__getitem__)
    return ReferenceFit(vocab, x_fit, x_eval, model.decision_function(x_eval))

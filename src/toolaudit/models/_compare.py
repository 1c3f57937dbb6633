"""Cross-check two backends: do they give the same log-probabilities for the same text?"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from toolaudit.errors import DataError
from toolaudit.models._base import LanguageModel


@dataclass(frozen=True, slots=True)
class ScoreAgreement:
    """How closely two backends' continuation log-probabilities agree.

    Surprisal is ``-log p`` in nats per token. ``max_text_delta`` is the largest
    per-text difference of mean surprisal; ``pooled_delta`` the difference of the mean
    over all tokens; ``correlation`` the Pearson correlation of per-token log-probs;
    ``max_token_delta`` and ``mean_token_delta`` the largest and the mean absolute
    per-token difference.
    """

    texts: int
    tokens: int
    mean_surprisal_a: float
    mean_surprisal_b: float
    pooled_delta: float
    max_text_delta: float
    correlation: float
    max_token_delta: float
    mean_token_delta: float


def score_agreement(a: Sequence[Sequence[float]], b: Sequence[Sequence[float]]) -> ScoreAgreement:
    """Compare per-token log-probabilities of the same continuations from two backends.

    Raises :class:`DataError` when a continuation has a different number of tokens in
    the two (the backends tokenize differently, so tokens cannot be paired).
    """
    if len(a) != len(b):
        raise DataError(f"score lists differ in length: {len(a)} vs {len(b)}")
    deltas: list[float] = []
    for i, (x, y) in enumerate(zip(a, b, strict=True)):
        if len(x) != len(y) or not x:
            raise DataError(f"text {i}: {len(x)} vs {len(y)} tokens; tokenization differs")
        deltas.append(abs(float(np.mean(x)) - float(np.mean(y))))
    pa = np.concatenate([np.asarray(x, float) for x in a])
    pb = np.concatenate([np.asarray(y, float) for y in b])
    corr = float(np.corrcoef(pa, pb)[0, 1]) if len(pa) > 1 else float("nan")
    return ScoreAgreement(
        texts=len(a),
        tokens=int(len(pa)),
        mean_surprisal_a=float(-pa.mean()),
        mean_surprisal_b=float(-pb.mean()),
        pooled_delta=float(abs(pa.mean() - pb.mean())),
        max_text_delta=max(deltas),
        correlation=corr,
        max_token_delta=float(np.abs(pa - pb).max()),
        mean_token_delta=float(np.abs(pa - pb).mean()),
    )


def compare_models(
    a: LanguageModel, b: LanguageModel, requests: Sequence[tuple[str, str]]
) -> ScoreAgreement:
    """Score the same ``(context, continuation)`` pairs with two models and compare."""
    return score_agreement(a.loglikelihood(requests), b.loglikelihood(requests))

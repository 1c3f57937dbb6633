"""Scikit-learn text pipeline backend (``sklearn:FILE``) and the controlled frozen model.

A fitted pipeline saved with joblib answers with ``predict_proba`` on the prompt text.
Its probability ``p`` of the positive class becomes the answer format the redaction
audit parses: :meth:`generate` returns ``<answer>k</answer>`` with ``k = 1 + round(9p)``,
and :meth:`loglikelihood` scores an answer option ``k`` (1..10) as ``log P(k)`` under a
Binomial(9, p) distribution over ``k - 1``, whose mean maps back to ``p`` exactly:
``(E[k] - 1) / 9 = p``.
"""

from __future__ import annotations

import hashlib
import logging
import math
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from toolaudit.errors import DataError, ModelError
from toolaudit.models._base import NoChat, cut_at_stop
from toolaudit.traces import Example

logger = logging.getLogger(__name__)

_OPTION = re.compile(r"^\s*(?:<answer>\s*)?(\d+)\s*(?:</answer>)?\s*$")
# An answer prefix left at the end of a scoring context is not evidence: drop it.
_ANSWER_PREFIX = re.compile(r"\s*<answer>\s*$")
OPTIONS = tuple(range(1, 11))


def example_text(example: Example) -> str:
    """The prompt text a model sees: ``prompt``, else the messages, else the trace."""
    if example.prompt is not None:
        return example.prompt
    if example.messages:
        return "\n".join(m.content for m in example.messages)
    return example.trace()


def option_logprob(option: int, p: float) -> float:
    """``log P(k = option)`` with ``k - 1 ~ Binomial(9, p)``; -inf where P is 0."""
    n, j = 9, option - 1
    terms = [math.lgamma(n + 1) - math.lgamma(j + 1) - math.lgamma(n - j + 1)]
    for count, q in ((j, p), (n - j, 1.0 - p)):
        if count:
            if q <= 0.0:
                return -math.inf
            terms.append(count * math.log(q))
    return sum(terms)


class SklearnModel(NoChat):
    """A fitted scikit-learn text classifier as a :class:`LanguageModel`.

    It scores answer options and completes with one; it has no chat (``render`` and
    ``generate`` raise :class:`CapabilityError`).

    Args:
        path: joblib file holding a fitted pipeline with ``predict_proba`` on raw text.
        positive: class label treated as "yes" (default: the larger of the classes).
    """

    no_render = (
        "a text classifier has no chat format; score answer options with loglikelihood, "
        "or load a chat model (e.g. embedded:qwen) for chats"
    )
    no_generate = (
        "a text classifier only scores answer options 1..10; use complete() for an "
        "<answer> tag, or load a chat model (e.g. embedded:qwen) to reply to a chat"
    )

    def __init__(self, path: str | Path, *, positive: Any = None) -> None:
        self.path = Path(path)
        self.positive = positive
        self._pipe: Any = None
        self._identity: str | None = None

    @classmethod
    def from_pipeline(cls, pipeline: Any, *, identity: str) -> SklearnModel:
        """Wrap an in-memory fitted pipeline."""
        self = cls(Path("<memory>"))
        self._pipe, self._identity = pipeline, identity
        return self

    @property
    def identity(self) -> str:
        """``sklearn:FILE@sha256-prefix`` of the file's bytes."""
        if self._identity is None:
            if not self.path.is_file():
                raise ModelError(
                    f"sklearn:{self.path}: no such model file; train one with "
                    "'toolaudit models train-controlled' or give the joblib file's path"
                )
            digest = hashlib.sha256(self.path.read_bytes()).hexdigest()[:16]
            self._identity = f"sklearn:{self.path}@{digest}"
        return self._identity

    def _load(self) -> Any:
        if self._pipe is None:
            import joblib

            if not self.path.is_file():
                raise ModelError(f"sklearn: no such model file: {self.path}")
            try:
                self._pipe = joblib.load(self.path)
            except Exception as exc:  # joblib/pickle raise many types on a foreign file
                raise ModelError(
                    f"sklearn:{self.path}: not a joblib-saved scikit-learn pipeline "
                    f"({type(exc).__name__}); give a file written by "
                    "'toolaudit models train-controlled' or joblib.dump"
                ) from None
            if not hasattr(self._pipe, "predict_proba"):
                raise ModelError(f"sklearn: {self.path} holds no estimator with predict_proba")
        return self._pipe

    def probabilities(self, texts: Sequence[str]) -> list[float]:
        """P(positive class) for each text."""
        pipe = self._load()
        if not texts:
            return []
        classes = list(pipe.classes_)
        pos = self.positive if self.positive is not None else max(classes)
        col = classes.index(pos)
        # Scoring repeats each context once per answer option: transform each text once.
        unique = list(dict.fromkeys(texts))
        scores = (float(row[col]) for row in pipe.predict_proba(unique))
        probs = dict(zip(unique, scores, strict=True))
        return [probs[t] for t in texts]

    @property
    def capabilities(self) -> frozenset[str]:
        """``loglikelihood`` only (of the answer options 1..10), plus :meth:`complete`."""
        return frozenset({"loglikelihood"})

    def complete(
        self, prompts: Sequence[str], *, max_tokens: int = 32, stop: Sequence[str] = ()
    ) -> list[str]:
        """``<answer>k</answer>`` with ``k = 1 + round(9p)`` (half rounds up)."""
        return [
            cut_at_stop(f"<answer>{1 + math.floor(9 * p + 0.5)}</answer>", stop)
            for p in self.probabilities(list(prompts))
        ]

    def loglikelihood(self, requests: Sequence[tuple[str, str]]) -> list[list[float]]:
        """``[log P(k)]`` for an answer option ``k`` in 1..10 (``"7"``, ``" 7"`` or
        ``"<answer>7</answer>"``); a trailing ``<answer>`` on the context is ignored."""
        options: list[int] = []
        for _, continuation in requests:
            m = _OPTION.match(continuation)
            k = int(m.group(1)) if m else 0
            if k not in OPTIONS:
                raise ModelError(
                    f"{self.identity}: can score only answer options 1..10 (e.g. ' 7' or "
                    f"'<answer>7</answer>'); got continuation {continuation!r}"
                )
            options.append(k)
        probs = self.probabilities([_ANSWER_PREFIX.sub("", c) for c, _ in requests])
        return [[option_logprob(k, p)] for k, p in zip(options, probs, strict=True)]


def l1_penalty() -> dict[str, Any]:
    """Keyword arguments that make ``LogisticRegression`` use a pure L1 penalty on any
    scikit-learn version: ``l1_ratio=1.0`` where ``penalty`` is deprecated (1.8 and
    later), ``penalty="l1"`` before, where ``l1_ratio`` alone is ignored (silently L2)."""
    import inspect

    from sklearn.linear_model import LogisticRegression

    default = inspect.signature(LogisticRegression).parameters["penalty"].default
    return {"l1_ratio": 1.0} if default == "deprecated" else {"penalty": "l1"}


def train_controlled_model(examples: Iterable[Example], *, seed: int = 0) -> Any:
    """The controlled example's frozen model: char_wb 3-5-gram TF-IDF + L1-penalized
    logistic regression, fitted on cluster ``C0``, split ``train``, on the full prompt
    text.

    It learns whatever predicts the label there, shortcut included, which is what the
    redaction audit then exposes.
    """
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import Pipeline

    rows = [e for e in examples if e.group == "C0" and e.split == "train"]
    labels = {e.label for e in rows}
    if len(labels) < 2:
        raise DataError(
            f"controlled model needs both labels in group C0, split train; found "
            f"{len(rows)} rows with labels {sorted(labels)}"
        )
    # An L1 penalty keeps the few n-grams that predict the label on C0 (whatever they
    # are) and drops the tens of thousands of label-independent ones; with L2 the model
    # memorizes noise n-grams of the ~20 KB prompts and transfers at chance. Case is
    # kept because identifiers are case-significant.
    pipe = Pipeline(
        [
            (
                "tfidf",
                TfidfVectorizer(
                    analyzer="char_wb",
                    ngram_range=(3, 5),
                    sublinear_tf=True,
                    min_df=2,
                    lowercase=False,
                ),
            ),
            (
                "clf",
                LogisticRegression(
                    C=5.0, solver="liblinear", max_iter=5000, random_state=seed, **l1_penalty()
                ),
            ),
        ]
    )
    pipe.fit([example_text(e) for e in rows], [e.label for e in rows])
    logger.info("trained controlled model on %d C0/train rows", len(rows))
    return pipe


def save_pipeline(pipeline: Any, path: str | Path) -> Path:
    """Save a fitted pipeline with joblib (parents created); returns the path."""
    import joblib

    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    joblib.dump(pipeline, out)
    return out


def load_sklearn(target: str, **options: Any) -> SklearnModel:
    """Registry factory for ``sklearn:FILE``."""
    if not target:
        raise ModelError("sklearn: spec needs a file, e.g. sklearn:frozen.joblib")
    return SklearnModel(target, **options)

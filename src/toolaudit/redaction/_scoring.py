"""Frozen-model scoring of rows: identical input rendering, generation, parsing and
scoring for every variant.

Answer handling follows the seed (Appendix B): the model answers with an integer
``a`` in 1..10 inside ``<answer>...</answer>``; the score is ``(a - 1) / 9``. Three modes:

* ``options`` - no sampling: the log-probability of each complete answer
  ``"{k}</answer>"`` after ``"<answer>"`` is read from the model, normalised over
  k = 1..10, and the score is ``(E[k] - 1) / 9``. Always valid; ``option_mass`` (the mean
  un-normalised probability of the ten answers) says how much of the model's mass the
  answer format received.
* ``yesno`` - no sampling: ``P(yes)`` normalised over the continuations " yes" / " no".
* ``generate`` - greedy generation (no assistant prefill), parsed as above. A reply
  without a parseable integer in 1..10 is invalid and scored 0.5 (the midpoint, so it
  neither helps nor hurts the ranking on average); the validity rate is reported.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

from toolaudit.errors import ConfigError, ModelError
from toolaudit.models import LanguageModel, example_text, render_user_turn
from toolaudit.progress import Progress
from toolaudit.traces import Example

Scoring = Literal["options", "yesno", "generate"]
SCORINGS: tuple[str, ...] = ("options", "yesno", "generate")
OPTIONS = tuple(range(1, 11))
ANSWER_OPEN = "<answer>"
ANSWER_CLOSE = "</answer>"
INVALID_SCORE = 0.5
#: Below this valid-answer rate a variant's AUROC mostly ranks the fixed
#: :data:`INVALID_SCORE`, not the model's answers: its ΔA is reported as not estimable.
MIN_VALID_RATE = 0.5
_ANSWER = re.compile(r"<answer>\s*(\d{1,3})\s*(?:</answer>|\Z)")


def unreadable(valid_rate: float | None) -> bool:
    """True when fewer than :data:`MIN_VALID_RATE` of a variant's answers could be read
    (``None`` / NaN: unknown, not unreadable).

    >>> unreadable(0.0), unreadable(1.0), unreadable(None)
    (True, False, False)
    """
    return valid_rate is not None and valid_rate < MIN_VALID_RATE


@dataclass(frozen=True, slots=True)
class RowScores:
    """Scores of a list of rows under one scoring mode."""

    scores: tuple[float, ...]
    valid: tuple[bool, ...]
    option_mass: tuple[float, ...]
    answers: tuple[str, ...]
    requests: int = 0

    @property
    def valid_rate(self) -> float:
        """Fraction of rows with a valid answer."""
        return sum(self.valid) / len(self.valid) if self.valid else float("nan")

    @property
    def mean_option_mass(self) -> float:
        """Mean probability mass on the answer options (``nan`` for generation)."""
        m = [x for x in self.option_mass if not math.isnan(x)]
        return sum(m) / len(m) if m else float("nan")


def model_input(example: Example) -> str:
    """The text the model sees for a row: ``prompt`` when present, else the message
    contents in order, else the tool trace (the same text the controlled model is
    trained on, :func:`toolaudit.models.example_text`)."""
    return example_text(example)


def parse_answer(text: str) -> int | None:
    """The integer in 1..10 inside the first ``<answer>`` tag, else ``None``.

    >>> parse_answer("Thinking... <answer> 7 </answer>"), parse_answer("<answer>11</answer>")
    (7, None)
    """
    m = _ANSWER.search(text)
    if m is None:
        return None
    a = int(m.group(1))
    return a if 1 <= a <= 10 else None


_Prompt = Callable[[str], str]


def _raw(text: str) -> str:
    return text


def _chat_turn(model: LanguageModel) -> _Prompt:
    """The prompt as one user turn in ``model``'s chat template (a model that cannot
    render a chat is refused before any request, naming the model)."""
    if "render" not in model.capabilities:
        raise ConfigError(
            f"{model.identity}: chat prompts need a model that renders a chat (its own chat "
            "template: embedded:qwen, hf: or llama: with one, openai: with tokenizer=); "
            "score raw text without chat"
        )

    return lambda text: render_user_turn(model, text)


def _softmax(logps: Sequence[float]) -> list[float]:
    top = max(logps)
    ex = [math.exp(x - top) for x in logps]
    total = sum(ex)
    return [e / total for e in ex]


def _score_options(model: LanguageModel, texts: Sequence[str], as_prompt: _Prompt) -> RowScores:
    ctx = [as_prompt(t + "\n" + ANSWER_OPEN) for t in texts]
    requests = [(c, f"{k}{ANSWER_CLOSE}") for c in ctx for k in OPTIONS]
    ll = model.loglikelihood(requests)
    if len(ll) != len(requests):
        raise ModelError(f"model returned {len(ll)} scores for {len(requests)} requests")
    scores, mass = [], []
    for r in range(len(texts)):
        sums = [sum(ll[r * len(OPTIONS) + j]) for j in range(len(OPTIONS))]
        p = _softmax(sums)
        expected = sum(k * pk for k, pk in zip(OPTIONS, p, strict=True))
        scores.append((expected - 1.0) / 9.0)
        mass.append(sum(math.exp(s) for s in sums))
    n = len(texts)
    return RowScores(tuple(scores), (True,) * n, tuple(mass), ("",) * n, len(requests))


def _score_yesno(model: LanguageModel, texts: Sequence[str], as_prompt: _Prompt) -> RowScores:
    ctx = [as_prompt(t + "\nAnswer (yes or no):") for t in texts]
    requests = [(c, cont) for c in ctx for cont in (" yes", " no")]
    ll = model.loglikelihood(requests)
    if len(ll) != len(requests):
        raise ModelError(f"model returned {len(ll)} scores for {len(requests)} requests")
    scores, mass = [], []
    for r in range(len(texts)):
        yes, no = sum(ll[2 * r]), sum(ll[2 * r + 1])
        scores.append(_softmax([yes, no])[0])
        mass.append(math.exp(yes) + math.exp(no))
    n = len(texts)
    return RowScores(tuple(scores), (True,) * n, tuple(mass), ("",) * n, len(requests))


def _score_generate(
    model: LanguageModel, texts: Sequence[str], as_prompt: _Prompt, max_tokens: int
) -> RowScores:
    prompts = [as_prompt(t) for t in texts]
    outs = model.complete(prompts, max_tokens=max_tokens, stop=(ANSWER_CLOSE,))
    if len(outs) != len(texts):
        raise ModelError(f"model returned {len(outs)} completions for {len(texts)} prompts")
    scores, valid = [], []
    for out in outs:
        a = parse_answer(out)
        valid.append(a is not None)
        scores.append((a - 1) / 9.0 if a is not None else INVALID_SCORE)
    n = len(texts)
    return RowScores(tuple(scores), tuple(valid), (float("nan"),) * n, tuple(outs), n)


def score_rows(
    model: LanguageModel,
    examples: Sequence[Example],
    *,
    scoring: Scoring = "options",
    batch_rows: int = 8,
    chat: bool = False,
    max_tokens: int = 24,
    progress: Progress | None = None,
    label: str = "",
) -> RowScores:
    """Score every row with ``model`` in batches of ``batch_rows`` (progress after each).

    ``chat``: each prompt (the row's text with the answer cue) is rendered as one user
    turn through the model's own chat template (:meth:`LanguageModel.render`), and the
    answer is the assistant's reply; else the raw text is scored.

    The same function, with the same arguments, scores every variant, so generation,
    parsing and scoring are identical by construction.
    """
    if scoring not in SCORINGS:
        raise ConfigError.invalid("scoring", SCORINGS, scoring)
    as_prompt = _chat_turn(model) if chat else _raw
    texts = [model_input(ex) for ex in examples]
    parts: list[RowScores] = []
    for start in range(0, len(texts), max(1, batch_rows)):
        chunk = texts[start : start + batch_rows]
        if scoring == "options":
            parts.append(_score_options(model, chunk, as_prompt))
        elif scoring == "yesno":
            parts.append(_score_yesno(model, chunk, as_prompt))
        else:
            parts.append(_score_generate(model, chunk, as_prompt, max_tokens))
        if progress is not None:
            progress(min(start + batch_rows, len(texts)), len(texts), label)
    return RowScores(
        tuple(x for p in parts for x in p.scores),
        tuple(x for p in parts for x in p.valid),
        tuple(x for p in parts for x in p.option_mass),
        tuple(x for p in parts for x in p.answers),
        sum(p.requests for p in parts),
    )

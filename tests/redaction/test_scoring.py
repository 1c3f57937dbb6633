"""Answer parsing and the three scoring modes, with small real LanguageModel classes."""

from __future__ import annotations

import math
from collections.abc import Sequence

import pytest

from toolaudit.errors import ConfigError
from toolaudit.models import CapabilityError, LanguageModel
from toolaudit.redaction import score_rows
from toolaudit.redaction._scoring import INVALID_SCORE, parse_answer
from toolaudit.traces import ChatMessage, Example


class KeywordModel:
    """Answers from the text: P(bind) = 0.9 when 'BIND' occurs in the prompt, else 0.2.

    Option k gets log P(k) of a Binomial(9, p) over k - 1, so E[k] = 1 + 9p exactly;
    generation emits the rounded answer, or nonsense when 'GARBLE' occurs.
    """

    identity = "test:keyword"

    def __init__(self) -> None:
        self.requests: list[tuple[str, str]] = []

    def _p(self, text: str) -> float:
        return 0.9 if "BIND" in text else 0.2

    def loglikelihood(self, requests: Sequence[tuple[str, str]]) -> list[list[float]]:
        self.requests += list(requests)
        out = []
        for ctx, cont in requests:
            p = self._p(ctx)
            if cont.startswith((" yes", " no")):
                out.append([math.log(p if cont == " yes" else 1 - p), -0.5])
                continue
            k = int(cont.split("<")[0])
            logc = math.lgamma(10) - math.lgamma(k) - math.lgamma(11 - k)
            out.append([logc + (k - 1) * math.log(p) + (10 - k) * math.log(1 - p), 0.0])
        return out

    def complete(self, prompts: Sequence[str], *, max_tokens: int = 32,
                 stop: Sequence[str] = ()) -> list[str]:  # fmt: skip
        return ["no idea" if "GARBLE" in p else f"<answer>{1 + round(9 * self._p(p))}"
                for p in prompts]  # fmt: skip

    # No chat: redaction scores and completes raw prompt text only.
    capabilities = frozenset({"loglikelihood"})

    def render(self, messages, tools=None, *, add_generation_prompt=True):  # type: ignore[no-untyped-def]
        raise CapabilityError("test:keyword: cannot render a chat")

    def generate(self, messages, tools=None, **options):  # type: ignore[no-untyped-def]
        raise CapabilityError("test:keyword: cannot generate a chat reply")


def _rows(*prompts: str) -> list[Example]:
    return [Example(id=str(i), label=i % 2, group="g", prompt=p) for i, p in enumerate(prompts)]


def test_keyword_model_is_a_language_model() -> None:
    assert isinstance(KeywordModel(), LanguageModel)


@pytest.mark.parametrize(
    ("text", "answer"),
    [("<answer>7</answer>", 7), ("reasoning <answer> 10 </answer>", 10), ("<answer>1", 1),
     ("<answer>0</answer>", None), ("<answer>11</answer>", None), ("7", None),
     ("<answer>7 because</answer>", None), ("", None)],
)  # fmt: skip
def test_parse_answer_accepts_only_integers_1_to_10(text: str, answer: int | None) -> None:
    assert parse_answer(text) == answer


def test_score_rows_options_recovers_the_probability_exactly() -> None:
    lm = KeywordModel()
    res = score_rows(lm, _rows("x BIND", "y", "z BIND"), scoring="options", batch_rows=2)
    assert res.scores == pytest.approx((0.9, 0.2, 0.9))
    assert res.valid_rate == 1.0 and res.mean_option_mass == pytest.approx(1.0)
    assert len(lm.requests) == 30
    assert lm.requests[0] == ("x BIND\n<answer>", "1</answer>")


def test_score_rows_yesno_normalises_over_two_answers() -> None:
    res = score_rows(KeywordModel(), _rows("BIND", "no"), scoring="yesno")
    assert res.scores == pytest.approx((0.9, 0.2))


def test_score_rows_generate_scores_invalid_answers_at_the_midpoint() -> None:
    res = score_rows(KeywordModel(), _rows("BIND", "GARBLE", "x"), scoring="generate")
    assert res.scores == pytest.approx(((9 - 1) / 9, INVALID_SCORE, (3 - 1) / 9))
    assert res.valid == (True, False, True) and res.valid_rate == pytest.approx(2 / 3)


def test_score_rows_reads_messages_when_there_is_no_prompt() -> None:
    row = Example(id="m", label=1, group="g",
                  messages=[ChatMessage(role="system", content="s"), ChatMessage(role="user", content="BIND")])  # fmt: skip
    assert score_rows(KeywordModel(), [row], scoring="yesno").scores == pytest.approx((0.9,))


def test_score_rows_rejects_unknown_scoring() -> None:
    with pytest.raises(ConfigError, match="invalid scoring='sample'"):
        score_rows(KeywordModel(), _rows("x"), scoring="sample")  # type: ignore[arg-type]


def test_score_rows_chat_scores_each_prompt_as_one_user_turn(tiny_lm) -> None:
    """``chat``: the row's text with its answer cue becomes one user turn in the model's
    own template (Qwen's ChatML here), for scoring and for generation alike."""
    turn = tiny_lm.render([{"role": "user", "content": "x BIND\n<answer>"}])
    assert turn.startswith("<|im_start|>") and turn.endswith("<|im_start|>assistant\n")
    got = score_rows(tiny_lm, _rows("x BIND"), scoring="options", chat=True)
    want = score_rows(tiny_lm, _rows("x BIND"), scoring="options")
    assert got.scores != want.scores  # the raw text and the chat turn are other inputs
    direct = tiny_lm.loglikelihood([(turn, f"{k}</answer>") for k in range(1, 11)])
    sums = [sum(x) for x in direct]
    top = max(sums)
    p = [math.exp(s - top) for s in sums]
    expected = sum(k * pk for k, pk in zip(range(1, 11), p, strict=True)) / sum(p)
    assert got.scores[0] == pytest.approx((expected - 1) / 9, abs=1e-9)
    reply = score_rows(tiny_lm, _rows("x"), scoring="generate", chat=True, max_tokens=3)
    raw = tiny_lm.complete([tiny_lm.render([{"role": "user", "content": "x"}])], max_tokens=3)
    assert reply.answers == tuple(raw)


def test_score_rows_chat_refuses_a_model_without_a_chat_template() -> None:
    with pytest.raises(ConfigError, match=r"test:keyword: chat prompts need a model that renders"):
        score_rows(KeywordModel(), _rows("x"), scoring="options", chat=True)

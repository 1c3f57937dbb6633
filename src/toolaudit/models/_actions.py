"""The probability that a model's next reply is a tool call, read from log-likelihoods.

An instruct model opens a call in more than one way. Measured on the embedded Qwen with a
retail system prompt and tools, the reply's first token is mostly ``{"`` (a bare JSON
call), some mass goes to a fenced block (```` ``` ````) and little to ``<tool_call>``
itself. ``P(call)`` therefore sums the probabilities of every opener the model uses; the
openers are not prefixes of one another, so the events are disjoint. A fenced block is
counted as a call opener even though a fence could also open code; ``openers`` reports
each part so a reader can discount it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from toolaudit.models._base import ChatTurn, LanguageModel, ToolSpec

#: Each opener a model uses to start a tool call -> the text from the opener up to the
#: tool's name (the name follows), as the chat templates of the embedded models write it.
CALL_OPENERS: dict[str, str] = {
    '{"': 'name": "',
    "```": 'json\n{"name": "',
    "<tool_call>": '\n{"name": "',
}


@dataclass(frozen=True, slots=True)
class CallReply:
    """``P(call)``, ``P(reply) = 1 - P(call)`` and the probability of each opener."""

    p_call: float
    p_reply: float
    openers: dict[str, float]

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {"p_call": self.p_call, "p_reply": self.p_reply, "openers": dict(self.openers)}


def call_reply_probabilities(
    lm: LanguageModel,
    messages: Sequence[ChatTurn],
    tools: Sequence[ToolSpec] | None = None,
    *,
    openers: Sequence[str] = tuple(CALL_OPENERS),
) -> CallReply:
    """Render the chat with the model's template and read ``P(opener)`` for each opener.

    Example:
        >>> lm = load_model("embedded:qwen")  # doctest: +SKIP
        >>> call_reply_probabilities(lm, messages, tools).p_call  # doctest: +SKIP
        0.93
    """
    context = lm.render(messages, tools)
    scores = lm.loglikelihood([(context, o) for o in openers])
    probs = {o: math.exp(sum(s)) for o, s in zip(openers, scores, strict=True)}
    p_call = min(1.0, sum(probs.values()))
    return CallReply(p_call=p_call, p_reply=1.0 - p_call, openers=probs)

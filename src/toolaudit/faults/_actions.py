"""The action distribution pi over the 17 actions (16 tools and the reply), read from
the model's log-likelihoods at a decision point (seed Eq. 4).

An instruct model opens a tool call in more than one way (the embedded Qwen mostly with
a bare JSON object ``{"``, some mass on a fenced block, rarely ``<tool_call>``), so:

- ``p_o = P(opener o | decision)`` for each opener in ``OPENERS`` (disjoint events: no
  opener is a prefix of another);
- ``q_ot = P(the call names tool t | decision, o)``: the continuation from the opener up
  to the end of the tool name. The closing quote is not scored: the model writes it
  fused with what follows (Qwen's ``",`` is one token), so a lone ``"`` token is an
  improbable spelling (about -11 nats on the embedded Qwen) that would hide every
  call. Without the quote, "the name begins with t" also covers a longer tool name that
  begins with t, so that name's mass is subtracted (``exact_split``); the events are
  then disjoint;
- the recognised call mass of tool t is ``c_t = sum_o p_o q_ot``; the reply takes what no
  opener takes, ``r = 1 - sum_o p_o``;
- an opener that continues with no known tool name is a format failure:
  ``p_unrecognised = sum_o p_o (1 - sum_t q_ot)`` is reported, not counted as a reply;
- ``pi = (c_1 .. c_16, r) / (sum_t c_t + r)``, a probability vector over the 17 actions.

``q_ot`` is read as ``P(opener + name) / P(opener)`` with the decision text as the only
context, so every continuation of a decision shares one context. Openers with ``p_o``
below ``MIN_OPENER`` are not split (their mass is counted as unrecognised).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from toolaudit.models import CALL_OPENERS

#: opener -> the text from the opener up to the tool name (defined with the models).
OPENERS = CALL_OPENERS
MIN_OPENER = 1e-4


@dataclass(frozen=True, slots=True)
class ActionDistribution:
    """pi over the tools and ``reply``, with the parts it was built from."""

    probs: dict[str, float]
    p_call: float
    p_unrecognised: float
    openers: dict[str, float] = field(default_factory=dict)

    @property
    def entropy(self) -> float:
        """Entropy in nats (bounded by log 17)."""
        return float(-sum(p * math.log(p) for p in self.probs.values() if p > 0))

    @property
    def leading(self) -> str:
        """The most probable action (ties broken by action order)."""
        return max(self.probs, key=lambda a: self.probs[a])

    def mass(self, actions: Sequence[str]) -> float:
        """Total probability of a group of actions."""
        return float(sum(self.probs.get(a, 0.0) for a in actions))


def _lp(scores: Sequence[float]) -> float:
    return float(sum(scores))


def requests_for(decision: str, tools: Sequence[str]) -> list[tuple[str, str]]:
    """Every continuation scored at one decision: each opener alone, then each opener
    followed by each tool name. All share the decision text as their context, so the
    model layer runs it once; nothing is appended to the context (a context that ended in
    an opener could tokenize differently from the opener as the model writes it)."""
    out = [(decision, o) for o in OPENERS]
    out += [(decision, f"{o}{OPENERS[o]}{t}") for o in OPENERS for t in tools]
    return out


def exact_split(begins: Sequence[float], tools: Sequence[str]) -> list[float]:
    """P(the name is exactly t) from P(the name begins with t), per tool: the mass of the
    nearest longer tool names that begin with t is taken away (the nearest only: theirs
    already holds the still longer ones). Clamped at 0 (scores are per-token rounded).

    >>> [round(q, 9) for q in exact_split([0.5, 0.2, 0.1], ["get", "get_order", "get_order_x"])]
    [0.3, 0.1, 0.1]
    """
    out = []
    for i, t in enumerate(tools):
        longer = [j for j, u in enumerate(tools) if u != t and u.startswith(t)]
        nearest = [
            j
            for j in longer
            if not any(tools[m] != tools[j] and tools[j].startswith(tools[m]) for m in longer)
        ]
        out.append(max(0.0, begins[i] - sum(begins[j] for j in nearest)))
    return out


def distribution_from_scores(
    scores: Sequence[Sequence[float]], tools: Sequence[str]
) -> ActionDistribution:
    """pi from the scores of ``requests_for`` (same order): ``q_ot`` is
    ``P(opener + name) / P(opener)``, the name's probability given the opener."""
    openers = list(OPENERS)
    lp_open = {o: _lp(scores[j]) for j, o in enumerate(openers)}
    p_open = {o: math.exp(v) for o, v in lp_open.items()}
    call = dict.fromkeys(tools, 0.0)
    unrecognised = 0.0
    base = len(openers)
    for j, o in enumerate(openers):
        block = scores[base + j * len(tools) : base + (j + 1) * len(tools)]
        begins = [min(1.0, math.exp(_lp(s) - lp_open[o])) for s in block]
        split = exact_split(begins, tools)
        if p_open[o] < MIN_OPENER:  # negligible opener: not split, counted as unrecognised
            unrecognised += p_open[o]
            continue
        total_q = min(1.0, sum(split))
        for t, q in zip(tools, split, strict=True):
            call[t] += p_open[o] * q
        unrecognised += p_open[o] * (1.0 - total_q)
    reply = max(0.0, 1.0 - sum(p_open.values()))
    total = sum(call.values()) + reply
    if total <= 0.0:  # every bit of mass on unrecognised openers
        probs = {**dict.fromkeys(tools, 0.0), "reply": 1.0}
    else:
        probs = {**{t: c / total for t, c in call.items()}, "reply": reply / total}
    return ActionDistribution(
        probs=probs,
        p_call=1.0 - probs["reply"],
        p_unrecognised=unrecognised,
        openers=p_open,
    )


def read_distributions(
    lm: Any, decisions: Sequence[str], tools: Sequence[str]
) -> list[ActionDistribution]:
    """pi at each decision context (rendered text ending where the model speaks), in one
    batched ``lm.loglikelihood`` call."""
    per = len(requests_for("", tools))
    reqs = [r for d in decisions for r in requests_for(d, tools)]
    scores = lm.loglikelihood(reqs)
    return [
        distribution_from_scores(scores[i * per : (i + 1) * per], tools)
        for i in range(len(decisions))
    ]

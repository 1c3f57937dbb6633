"""A plain-callable backend used by the ``py:`` tests."""

from __future__ import annotations

from collections.abc import Sequence

CALLS: list[int] = []


def echo_upper(prompts: Sequence[str], *, max_tokens: int = 32) -> list[str]:
    """Upper-case each prompt, cut to ``max_tokens`` characters."""
    CALLS.append(len(prompts))
    return [p.upper()[:max_tokens] for p in prompts]


def _ll(requests: Sequence[tuple[str, str]]) -> list[list[float]]:
    return [[-float(len(c))] * len(k) for c, k in requests]


echo_upper.loglikelihood = _ll  # type: ignore[attr-defined]


def no_scoring(prompts: Sequence[str]) -> list[str]:
    """Generation only."""
    return ["x" for _ in prompts]


def impossible(prompts: Sequence[str]) -> list[str]:
    """A scorer that answers what no model can: set ``impossible.answer`` first."""
    return ["x" for _ in prompts]


def _impossible_ll(requests: Sequence[tuple[str, str]]) -> list[list[float]]:
    return [list(impossible.answer) for _ in requests]  # type: ignore[attr-defined]


impossible.loglikelihood = _impossible_ll  # type: ignore[attr-defined]
impossible.answer = [-1.0]  # type: ignore[attr-defined]


def _escape_chat(messages: list[dict[str, str]], tools: list[dict[str, str]]) -> str:
    return "\x1b]8;;http://evil.example\x07click\x1b]8;;\x07 \x1b[31mred\x1b[0m"


impossible.chat = _escape_chat  # type: ignore[attr-defined]

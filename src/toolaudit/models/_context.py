"""The explicit context policy: a context longer than the window is an error, unless
truncation was asked for, and then it is counted.

``truncate="left"`` drops the oldest tokens (after a leading ``<bos>``, which is kept);
``"middle"`` keeps the beginning (system prompt, tools) and the end (the latest turns)
and drops the middle. The window covers context plus continuation (scoring) or context
plus ``max_tokens`` (generation).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from toolaudit.errors import ConfigError
from toolaudit.models._base import TRUNCATE, ContextLengthError


@dataclass(slots=True)
class TruncationCounter:
    """How many contexts were cut and how many tokens that removed (for results)."""

    contexts: int = 0
    tokens: int = 0

    def as_dict(self) -> dict[str, int]:
        """``{"contexts": .., "tokens": ..}`` as recorded in results files."""
        return {"contexts": self.contexts, "tokens": self.tokens}


def check_truncate(value: str) -> str:
    """Validate a ``truncate`` option (``error``, ``left`` or ``middle``)."""
    if value not in TRUNCATE:
        raise ConfigError.invalid("truncate", TRUNCATE, value)
    return value


def fit_context(
    ids: Sequence[int],
    extra: int,
    *,
    window: int,
    truncate: str,
    model: str,
    keep_first: bool = False,
) -> tuple[list[int], int]:
    """``(ids that fit, tokens removed)`` so that ``len(ids) + extra <= window``.

    Raises :class:`ContextLengthError` (one line naming the model and the fix) when the
    context does not fit and ``truncate`` is ``error``, or when ``extra`` alone fills the
    window.
    """
    need = len(ids) + extra
    if need <= window:
        return list(ids), 0
    if truncate == "error":
        raise ContextLengthError(
            f"{model}: context of {len(ids):,} tokens plus {extra:,} to score or generate "
            f"exceeds the window of {window:,} tokens; shorten the input or opt in to "
            "truncation with --truncate left|middle (truncate='left'|'middle')"
        )
    head = 1 if keep_first and ids else 0
    room = window - extra - head
    if room < 1:
        raise ContextLengthError(
            f"{model}: {extra:,} tokens to score or generate leave no room for context in the "
            f"window of {window:,} tokens; score a shorter continuation"
        )
    body = list(ids[head:])
    if truncate == "left":
        kept = body[len(body) - room :]
    else:
        front = room // 2
        kept = body[:front] + body[len(body) - (room - front) :]
    out = list(ids[:head]) + kept
    return out, len(ids) - len(out)

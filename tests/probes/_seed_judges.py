"""TEST FIXTURE ONLY: deterministic ``py:`` judges for the seed-protocol judge audit.

``steady`` always passes with an outcome reason; ``format_sensitive`` fails with a
procedural reason exactly when the payload shows reformatted tool output
(``{"result": ...}``) and passes otherwise. Every payload either receives is kept in
``SEEN`` so tests can read what reached the judges.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

SEEN: list[list[dict[str, Any]]] = []


def _user(messages: Sequence[dict[str, Any]]) -> str:
    return "\n".join(str(m.get("content", "")) for m in messages if m.get("role") == "user")


def steady(prompts: list[str]) -> list[str]:
    """Completion entry point (unused by the audit)."""
    return ["PASS" for _ in prompts]


def _steady_chat(messages: list[dict[str, Any]], tools: list[Any]) -> str:
    SEEN.append(messages)
    return "PASS\nThe agent completed the user's request."


def format_sensitive(prompts: list[str]) -> list[str]:
    """Completion entry point (unused by the audit)."""
    return ["PASS" for _ in prompts]


def reformatted(text: str) -> bool:
    """Whether a payload shows a tool output as reformatted (wrapped in ``result``)."""
    return '"result": {' in text or '"result": [' in text


def _sensitive_chat(messages: list[dict[str, Any]], tools: list[Any]) -> str:
    SEEN.append(messages)
    if reformatted(_user(messages)):
        return "FAIL\nThe agent did not ask for explicit confirmation before acting."
    return "PASS\nThe order was handled as asked."


steady.chat = _steady_chat  # type: ignore[attr-defined]
format_sensitive.chat = _sensitive_chat  # type: ignore[attr-defined]

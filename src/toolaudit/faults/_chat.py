"""A trajectory as chat messages, rendered by the model's own chat template.

No turn marker is written here: the model layer's ``lm.render`` applies the tokenizer's
template with the 16 retail tool schemas. A return to be scored is rendered as a slot
string and the rendered text is cut there, so the context is exactly what the model
sees before the return and the continuation is the return's own bytes.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, cast

from toolaudit.errors import ModelError
from toolaudit.faults._replay import Event, Text, ToolStep
from toolaudit.faults._schemas import TOOL_SCHEMAS
from toolaudit.models import ChatTurn, FunctionSpec, ToolSpec

#: Placeholder rendered where a scored return goes (cut out of the rendered text).
SLOT = "TOOLAUDIT_RETURN_SLOT_7F3A"


def tool_specs(names: Sequence[str] | None = None) -> list[ToolSpec]:
    """The retail tools as OpenAI function schemas, in schema order (or ``names``)."""
    chosen = list(TOOL_SCHEMAS) if names is None else list(names)
    # the schema's own key order (name, description, parameters) is what templates print
    return [
        {"type": "function", "function": cast(FunctionSpec, {"name": n, **TOOL_SCHEMAS[n]})}
        for n in chosen
    ]


def call_message(step: ToolStep, call_id: str) -> ChatTurn:
    """The assistant message that makes one tool call."""
    return {
        "role": "assistant",
        "content": "",
        "tool_calls": [
            {
                "id": call_id,
                "type": "function",
                "function": {"name": step.name, "arguments": dict(step.arguments)},
            }
        ],
    }


def event_messages(event: Event, index: int, *, content: str | None = None) -> list[ChatTurn]:
    """One event as messages: a text turn, or a call and its return (``content``
    replaces the return when given)."""
    if isinstance(event, Text):
        return [{"role": event.role, "content": event.text}]
    call_id = f"call_{index}"
    body = event.content if content is None else content
    return [
        call_message(event, call_id),
        {"role": "tool", "tool_call_id": call_id, "name": event.name, "content": body},
    ]


@dataclass(frozen=True, slots=True)
class Split:
    """A rendered chat cut at the slot: ``context`` before the return."""

    context: str
    after: str


def render_split(lm: Any, messages: Sequence[ChatTurn], tools: Sequence[ToolSpec] | None) -> Split:
    """Render ``messages`` (whose last message is a tool return holding ``SLOT``) and cut
    the text at the slot."""
    text = lm.render(messages, tools, add_generation_prompt=False)
    if text.count(SLOT) != 1:
        raise ModelError(
            f"{getattr(lm, 'identity', lm)}: the chat template did not render the tool "
            "return verbatim (cannot score it)"
        )
    before, after = text.split(SLOT)
    return Split(before, after)


def schema_only_messages(step: ToolStep) -> list[ChatTurn]:
    """The S0 conditioning c0: the call alone, its return slot (the schema is the
    ``tools`` argument)."""
    return event_messages(step, 0, content=SLOT)


def arguments_text(step: ToolStep) -> str:
    """The call's arguments as JSON (for logs)."""
    return json.dumps(step.arguments, sort_keys=True)

"""How a trajectory is written in Gemma's turn format, as a list of text segments.

Segments are tokenized one by one and concatenated, so the token ids of a segment (a
tool return, a tool name) are the same in every context it appears in: the scored
continuation is the same tokens under the schema-only and the whole-prefix contexts,
and every arm's prefix is the same tokens up to the site.

Layout (one turn per line)::

    <start_of_turn>user  {policy} # Tools {one JSON schema per line} {format note}<end_of_turn>
    <start_of_turn>user  {customer text}<end_of_turn>
    <start_of_turn>model <tool_call>\\n{"name": "NAME", "arguments": {...}}\\n</tool_call><end_of_turn>
    <start_of_turn>user  <tool_response>\\n{return}\\n</tool_response><end_of_turn>
    <start_of_turn>model {agent text}<end_of_turn>

A decision point is the context ending in ``<start_of_turn>model\\n``: the model either
opens a tool call (``<tool_call>\\n{"name": "``, then a tool name and ``"``) or replies.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from toolaudit.faults._replay import Text, ToolStep
from toolaudit.faults._schemas import schema_line

START, END = "<start_of_turn>", "<end_of_turn>"
TURN_MODEL = f"{START}model\n"
CALL_OPEN = '<tool_call>\n{"name": "'
RET_OPEN = f"{START}user\n<tool_response>\n"
RET_CLOSE = f"\n</tool_response>{END}\n"
FORMAT_NOTE = (
    "# Format\nTo call a tool, answer with exactly one block "
    '<tool_call>\n{"name": "TOOL", "arguments": {...}}\n</tool_call> and nothing else; '
    "its result comes back in a <tool_response> block. To reply to the customer, answer "
    "with plain text."
)


def system_segment(policy: str, tools: Sequence[str], schemas: dict[str, Any] | None = None) -> str:
    """The opening turn: policy, tool schemas (one JSON line each) and the call format."""
    lines = "\n".join(schema_line(t, schemas) for t in tools)
    return f"{START}user\n{policy.strip()}\n\n# Tools\n{lines}\n\n{FORMAT_NOTE}{END}\n"


def name_segment(name: str) -> str:
    """The tool-name continuation scored as one candidate action."""
    return f'{name}"'


def call_rest(arguments: dict[str, Any]) -> str:
    """What follows the tool name in a call turn."""
    return f', "arguments": {json.dumps(arguments)}}}\n</tool_call>{END}\n'


def call_segments(step: ToolStep) -> list[str]:
    """A call turn up to the opening of its return: decision, call, return opener."""
    return [TURN_MODEL, CALL_OPEN, name_segment(step.name), call_rest(step.arguments), RET_OPEN]


def text_segments(event: Text) -> list[str]:
    """A customer or agent message as its own turn."""
    if event.role == "assistant":
        return [TURN_MODEL, f"{event.text}{END}\n"]
    return [f"{START}user\n{event.text}{END}\n"]


def event_segments(event: Text | ToolStep, *, content: str | None = None) -> list[str]:
    """All segments of one event (a tool step with its return, optionally substituted)."""
    if isinstance(event, Text):
        return text_segments(event)
    body = event.content if content is None else content
    return [*call_segments(event), body, RET_CLOSE]


def schema_only_segments(step: ToolStep, *, schemas: dict[str, Any] | None = None) -> list[str]:
    """The S0 context: that one tool's schema and the call, up to the return opener."""
    head = f"{START}user\n# Tools\n{schema_line(step.name, schemas)}\n\n{FORMAT_NOTE}{END}\n"
    return [head, *call_segments(step)]

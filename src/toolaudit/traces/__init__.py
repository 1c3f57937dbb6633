"""Trace records (Example, Episode), JSONL I/O and loaders for public agent-result formats."""

from toolaudit.traces._jsonl import append_jsonl, iter_json_objects, read_jsonl, write_jsonl
from toolaudit.traces._schema import (
    SCHEMA_VERSION,
    ChatMessage,
    Episode,
    Example,
    Message,
    ToolCall,
    ToolSection,
)

__all__ = [
    "SCHEMA_VERSION",
    "ChatMessage",
    "Episode",
    "Example",
    "Message",
    "ToolCall",
    "ToolSection",
    "append_jsonl",
    "iter_json_objects",
    "read_jsonl",
    "write_jsonl",
]

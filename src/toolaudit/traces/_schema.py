"""Record types written to and read from disk: Example and Episode (JSON Lines)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

SCHEMA_VERSION = 1


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ToolSection(_Record):
    """One serialized tool result inside an Example; sections are ordered."""

    name: str
    content: str


class ChatMessage(_Record):
    """A plain chat message (prompt-bearing)."""

    role: str
    content: str


class Example(_Record):
    """One prompt with its evidence; the unit of the leakage and redaction audits.

    ``prompt``, ``messages`` and any copies under ``meta`` are prompt-bearing; ``label``
    and ``answer`` never are.
    """

    schema_version: int = SCHEMA_VERSION
    id: str
    label: Literal[0, 1]
    group: str
    split: str = ""
    fields: dict[str, str] = Field(default_factory=dict)
    tools: list[ToolSection] = Field(default_factory=list)
    prompt: str | None = None
    messages: list[ChatMessage] | None = None
    answer: str | None = None
    meta: dict[str, Any] = Field(default_factory=dict)

    def trace(self, tools: list[str] | None = None) -> str:
        """The serialized trace: tool sections joined in order (optionally a subset)."""
        sections = self.tools if tools is None else [t for t in self.tools if t.name in tools]
        return "\n".join(t.content for t in sections)


class ToolCall(_Record):
    """A tool call made by the assistant."""

    id: str
    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)


class Message(_Record):
    """One message of an Episode.

    ``role`` is ``system``, ``user``, ``assistant`` or ``tool``. Assistant messages may
    carry ``tool_calls``; tool messages carry ``tool_call_id``, ``name`` and ``error``.
    """

    role: Literal["system", "user", "assistant", "tool"]
    content: str | None = None
    tool_calls: list[ToolCall] | None = None
    tool_call_id: str | None = None
    name: str | None = None
    error: bool = False


class Episode(_Record):
    """One agent run: the unit of the probe and faults audits."""

    schema_version: int = SCHEMA_VERSION
    task_id: str
    trial: int = 0
    seed: int | None = None
    condition: str = "original"
    messages: list[Message] = Field(default_factory=list)
    reward: float | None = None
    reward_components: dict[str, float] | None = None
    termination_reason: str | None = None
    source: dict[str, Any] = Field(default_factory=dict)

    def tool_calls(self) -> list[ToolCall]:
        """Every tool call in order."""
        return [c for m in self.messages if m.tool_calls for c in m.tool_calls]

    def tool_results(self) -> list[Message]:
        """Every tool-result message in order."""
        return [m for m in self.messages if m.role == "tool"]

    def action_names(self) -> list[str]:
        """The sequence of tool names called."""
        return [c.name for c in self.tool_calls()]

"""Scripted reference agents on real tau2 tasks, driven through Inspect's ``mockllm``.

They give the known-answer test of the whole pipeline (mutation, fresh runs, the task's
own scorer, mapping back, rescoring) with no model. What ``careful``, ``overfit``,
``inert`` and the scripted user do is decided in :mod:`toolaudit.probes.agents.script`
(shared with the tau2-bench harness); here each decision becomes a mockllm output. Each
output carries token usage, so mockllm does not count tokens (which would need a
tokenizer download).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from contextvars import ContextVar
from typing import Any

from toolaudit.probes.agents.script import (
    SCRIPTED,
    STOP,
    Cursor,
    Reference,
    ToolUse,
    agent_turn,
    user_turn,
)

__all__ = [
    "CURRENT_SAMPLE",
    "SCRIPTED",
    "STOP",
    "ScriptedAgent",
    "ScriptedUser",
    "batch_scripted_models",
    "scripted_models",
]

#: The id of the sample whose conversation is running (set by the first solver step of a
#: batched task, :func:`mark_sample`): one eval runs many samples at once, and the scripted
#: models keep one conversation's progress per sample.
CURRENT_SAMPLE: ContextVar[str] = ContextVar("toolaudit_inspect_sample")


def _usage() -> Any:
    from inspect_ai.model import ModelUsage

    return ModelUsage(input_tokens=0, output_tokens=0, total_tokens=0)


def _text(content: str) -> Any:
    from inspect_ai.model import ModelOutput

    out = ModelOutput.from_content("mockllm/model", content)
    out.usage = _usage()
    return out


def _call(name: str, arguments: dict[str, Any], n: int) -> Any:
    from inspect_ai.model import ModelOutput

    out = ModelOutput.for_tool_call(
        "mockllm/model", name, dict(arguments), tool_call_id=f"script_{n}", content=""
    )
    out.usage = _usage()
    return out


class ScriptedAgent:
    """The agent side of one scripted conversation (a mockllm ``custom_outputs``
    callable: ``(input, tools, tool_choice, config) -> ModelOutput``).

    Args:
        policy: ``careful``, ``overfit`` or ``inert``.
        cursor: the conversation's shared progress.
        descriptions: canonical operation -> its tool's description.
    """

    def __init__(
        self, policy: str, cursor: Cursor | Callable[[], Cursor], descriptions: dict[str, str]
    ) -> None:
        self.policy = policy
        self._cursor = cursor
        self.descriptions = descriptions

    @property
    def cursor(self) -> Cursor:
        """The running conversation's progress (the running sample's, in a batch)."""
        return self._cursor if isinstance(self._cursor, Cursor) else self._cursor()

    def __call__(self, input: list[Any], tools: list[Any], tool_choice: Any, config: Any) -> Any:
        shown = [(str(t.name), t.description) for t in tools]
        cursor = self.cursor
        move = agent_turn(self.policy, cursor, shown, self.descriptions)
        if isinstance(move, ToolUse):
            return _call(move.name, move.arguments, len(cursor.calls))
        return _text(move.text)


class ScriptedUser:
    """The user-simulator side of one scripted conversation (see
    :mod:`toolaudit.probes.agents.script`)."""

    def __init__(self, cursor: Cursor | Callable[[], Cursor]) -> None:
        self._cursor = cursor

    def __call__(self, input: list[Any], tools: list[Any], tool_choice: Any, config: Any) -> Any:
        cursor = self._cursor if isinstance(self._cursor, Cursor) else self._cursor()
        move = user_turn(cursor)
        if isinstance(move, ToolUse):
            return _call(move.name, move.arguments, len(cursor.calls))
        return _text(move.text)


def scripted_models(policy: str, reference: Reference, descriptions: dict[str, str]) -> Any:
    """The (agent, user) mockllm models of one scripted conversation."""
    from inspect_ai.model import get_model

    cursor = Cursor(reference)
    agent = get_model(
        "mockllm/model",
        custom_outputs=ScriptedAgent(policy, cursor, descriptions),
        memoize=False,
    )
    user = get_model("mockllm/model", custom_outputs=ScriptedUser(cursor), memoize=False)
    return agent, user


def batch_scripted_models(
    policy: str, references: Mapping[str, Reference], descriptions: dict[str, str]
) -> Any:
    """The (agent, user) mockllm models of many scripted conversations run in one eval:
    each sample's conversation keeps its own progress, found by :data:`CURRENT_SAMPLE`."""
    from inspect_ai.model import get_model

    cursors: dict[str, Cursor] = {}

    def cursor() -> Cursor:
        sample = CURRENT_SAMPLE.get()
        if sample not in cursors:
            cursors[sample] = Cursor(references[sample])
        return cursors[sample]

    agent = get_model(
        "mockllm/model",
        custom_outputs=ScriptedAgent(policy, cursor, descriptions),
        memoize=False,
    )
    user = get_model("mockllm/model", custom_outputs=ScriptedUser(cursor), memoize=False)
    return agent, user


def mark_sample() -> Any:
    """A solver step that records the running sample's id in :data:`CURRENT_SAMPLE` (the
    first step of a batched task; it changes nothing in the conversation)."""
    from inspect_ai.solver import Generate, TaskState, solver

    @solver(name="toolaudit_mark_sample")
    def _mark() -> Any:
        async def solve(state: TaskState, generate: Generate) -> TaskState:
            CURRENT_SAMPLE.set(str(state.sample_id))
            return state

        return solve

    return _mark()

"""Scripted reference agents on real tau2 tasks, driven through Inspect's ``mockllm``.

They give the known-answer test of the whole pipeline (mutation, fresh runs, the task's
own scorer, mapping back, rescoring) with no model:

* ``careful`` performs each task's reference actions in order, choosing every tool by
  its *description* (which every condition keeps true), then tells the user the
  information the task requires. It should pass under every condition where the
  benchmark scores what was done, not what the tools were called.
* ``overfit`` performs the same actions under the *canonical names it memorised*: a
  renamed tool is not found, a misleading name runs another operation.
* ``inert`` never calls a tool: the no-op baseline (what an agent that does nothing
  scores).

A scripted user simulator plays the other side from the same reference: it opens the
conversation, performs the actions the task assigns to the user (telecom's phone) when
their turn comes, and ends the conversation (``###STOP###``) once the agent has finished
or made no progress in a turn. Agent and user share one cursor over the reference
actions, so the dialogue follows the reference order. Each output carries token usage,
so mockllm does not count tokens (which would need a tokenizer download).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from toolaudit.probes._inspect_tau2 import Reference

SCRIPTED = ("careful", "overfit", "inert")
STOP = "###STOP###"
GREETING = "Hi, I need help with a request on my account."
HAND_OVER = "Thanks, I have done that. Please go ahead."
INERT_REPLY = "I am sorry, I cannot help with that request."


@dataclass
class _Cursor:
    """Progress of one conversation through the reference actions (shared by agent and
    user)."""

    reference: Reference
    position: int = 0
    agent_done: bool = False
    user_turns: int = 0
    at_last_user_turn: int = -1
    calls: list[str] = field(default_factory=list)

    def next_action(self, requestor: str) -> Any:
        acts = self.reference.actions
        if self.position < len(acts) and acts[self.position].requestor == requestor:
            return acts[self.position]
        return None

    @property
    def finished(self) -> bool:
        return self.position >= len(self.reference.actions)


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

    def __init__(self, policy: str, cursor: _Cursor, descriptions: dict[str, str]) -> None:
        self.policy = policy
        self.cursor = cursor
        self.descriptions = descriptions

    def _shown_name(self, operation: str, tools: list[Any]) -> str:
        if self.policy == "overfit":
            return operation  # the memorised canonical name, whatever is shown
        wanted = self.descriptions.get(operation)
        for t in tools:
            if t.description == wanted:
                return str(t.name)
        return operation

    def __call__(self, input: list[Any], tools: list[Any], tool_choice: Any, config: Any) -> Any:
        cur = self.cursor
        if self.policy == "inert":
            cur.agent_done = True
            return _text(INERT_REPLY)
        action = cur.next_action("assistant")
        if action is not None:
            cur.position += 1
            name = self._shown_name(action.name, tools)
            cur.calls.append(name)
            return _call(name, action.arguments, len(cur.calls))
        if cur.finished:
            cur.agent_done = True
            info = " ".join(cur.reference.communicate)
            return _text(("Your request is complete. " + info).strip())
        return _text("Please do the next step on your device and tell me when it is done.")


class ScriptedUser:
    """The user-simulator side of one scripted conversation (see the module docstring)."""

    def __init__(self, cursor: _Cursor) -> None:
        self.cursor = cursor

    def __call__(self, input: list[Any], tools: list[Any], tool_choice: Any, config: Any) -> Any:
        cur = self.cursor
        action = cur.next_action("user")
        if action is not None and not cur.agent_done:
            cur.position += 1
            cur.calls.append(action.name)
            return _call(action.name, action.arguments, len(cur.calls))
        first = cur.user_turns == 0
        cur.user_turns += 1
        if cur.agent_done or (not first and cur.position == cur.at_last_user_turn):
            return _text(STOP)
        cur.at_last_user_turn = cur.position
        return _text(GREETING if first else HAND_OVER)


def scripted_models(policy: str, reference: Reference, descriptions: dict[str, str]) -> Any:
    """The (agent, user) mockllm models of one scripted conversation."""
    from inspect_ai.model import get_model

    cursor = _Cursor(reference)
    agent = get_model(
        "mockllm/model",
        custom_outputs=ScriptedAgent(policy, cursor, descriptions),
        memoize=False,
    )
    user = get_model("mockllm/model", custom_outputs=ScriptedUser(cursor), memoize=False)
    return agent, user

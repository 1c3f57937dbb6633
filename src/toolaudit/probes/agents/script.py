"""The scripted reference agents and the scripted user, as decisions over a task's
reference (its actions in order and the information the agent must communicate).

* ``careful`` performs each reference action in order, choosing every tool by its
  *description* (which every condition keeps true), then tells the user the required
  information. It should pass under every condition where the benchmark scores what was
  done, not what the tools were called.
* ``overfit`` performs the same actions under the *canonical names it memorised*: a
  renamed tool is not found, a misleading name runs another operation.
* ``inert`` never calls a tool: the no-op baseline.
* ``lexical`` performs the same actions choosing every tool by its *name*: the shown name
  whose words best match the operation's canonical name. A meaning-preserving rename
  (``fetch_order_details`` for ``get_order_details``) keeps the match, so it survives
  ``tool_rename``; a misleading name (another tool's canonical name) wins the match, so
  it follows it. It is the misleading-names control's known positive that renaming alone
  does not trigger (not run by default).

The scripted user opens the conversation, performs the actions the task assigns to the
user (telecom's phone) when their turn comes, and ends the conversation (``###STOP###``)
once the agent has finished or made no progress in a turn. Agent and user share one
:class:`Cursor` over the reference actions, so the dialogue follows the reference order.
Imports nothing of a harness.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

#: Every scripted agent; ``DEFAULT_SCRIPTED`` are those a study runs without ``--policies``.
SCRIPTED = ("careful", "overfit", "inert", "lexical")
DEFAULT_SCRIPTED = ("careful", "overfit", "inert")
STOP = "###STOP###"
GREETING = "Hi, I need help with a request on my account."
HAND_OVER = "Thanks, I have done that. Please go ahead."
INERT_REPLY = "I am sorry, I cannot help with that request."
DONE = "Your request is complete."
NEXT_STEP = "Please do the next step on your device and tell me when it is done."


@dataclass(frozen=True, slots=True)
class ReferenceAction:
    """One reference action of a tau2 task: who performs it, the operation, arguments."""

    requestor: str
    name: str
    arguments: dict[str, Any]


@dataclass(frozen=True, slots=True)
class Reference:
    """What a tau2 task's evaluation expects: its actions in order, and the information
    the agent must communicate."""

    actions: tuple[ReferenceAction, ...]
    communicate: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class ToolUse:
    """A decision to call ``name`` with ``arguments``."""

    name: str
    arguments: dict[str, Any]


@dataclass(frozen=True, slots=True)
class Say:
    """A decision to say ``text``."""

    text: str


@dataclass
class Cursor:
    """Progress of one conversation through the reference actions (shared by agent and
    user)."""

    reference: Reference
    position: int = 0
    agent_done: bool = False
    user_turns: int = 0
    at_last_user_turn: int = -1
    calls: list[str] = field(default_factory=list)

    def next_action(self, requestor: str) -> ReferenceAction | None:
        """The next reference action, if ``requestor`` performs it."""
        acts = self.reference.actions
        if self.position < len(acts) and acts[self.position].requestor == requestor:
            return acts[self.position]
        return None

    @property
    def finished(self) -> bool:
        """Whether every reference action has been performed."""
        return self.position >= len(self.reference.actions)


def shown_name(
    policy: str,
    operation: str,
    shown: Sequence[tuple[str, str]],
    descriptions: Mapping[str, str],
) -> str:
    """The name ``policy`` calls ``operation`` by, among the ``shown`` (name,
    description) pairs: ``overfit`` its memorised canonical name, ``lexical`` the shown
    name most like the operation's (:func:`closest_name`), ``careful`` the shown tool
    whose description is the operation's (``descriptions``: canonical name ->
    description)."""
    if policy == "overfit":
        return operation
    if policy == "lexical":
        return closest_name(operation, [name for name, _ in shown]) or operation
    wanted = descriptions.get(operation)
    for name, description in shown:
        if description == wanted:
            return name
    return operation


def closest_name(operation: str, names: Sequence[str]) -> str | None:
    """The name in ``names`` whose words best match ``operation``'s: most words in common
    (``_``-separated), then the fewest words besides, then the closest spelling
    (difflib's ratio), then the first; None when there are none.

    >>> closest_name("get_order_details", ["fetch_order_details", "fetch_user_details"])
    'fetch_order_details'
    >>> closest_name("get_order_details", ["cancel_order", "get_order_details"])
    'get_order_details'
    """
    from difflib import SequenceMatcher

    want = set(operation.lower().split("_"))

    def key(name: str) -> tuple[int, int, float]:
        words = set(name.lower().split("_"))
        ratio = SequenceMatcher(None, operation.lower(), name.lower()).ratio()
        return (len(want & words), -len(words ^ want), ratio)

    return max(names, key=key) if names else None


def agent_turn(
    policy: str,
    cursor: Cursor,
    shown: Sequence[tuple[str, str]],
    descriptions: Mapping[str, str],
) -> ToolUse | Say:
    """The agent's next move (see the module docstring)."""
    if policy == "inert":
        cursor.agent_done = True
        return Say(INERT_REPLY)
    action = cursor.next_action("assistant")
    if action is not None:
        cursor.position += 1
        name = shown_name(policy, action.name, shown, descriptions)
        cursor.calls.append(name)
        return ToolUse(name, dict(action.arguments))
    if cursor.finished:
        cursor.agent_done = True
        info = " ".join(cursor.reference.communicate)
        return Say((DONE + " " + info).strip())
    return Say(NEXT_STEP)


def user_turn(cursor: Cursor, *, greeting: str = GREETING) -> ToolUse | Say:
    """The scripted user's next move (see the module docstring)."""
    action = cursor.next_action("user")
    if action is not None and not cursor.agent_done:
        cursor.position += 1
        cursor.calls.append(action.name)
        return ToolUse(action.name, dict(action.arguments))
    first = cursor.user_turns == 0
    cursor.user_turns += 1
    if cursor.agent_done or (not first and cursor.position == cursor.at_last_user_turn):
        return Say(STOP)
    cursor.at_last_user_turn = cursor.position
    return Say(greeting if first else HAND_OVER)

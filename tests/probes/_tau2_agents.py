"""Scripted ``py:`` models for the tau2-bench harness tests (no model weights): they
reach tau2's orchestrator through toolaudit's model layer exactly as a real model does
(``chat(messages, tools) -> str``, tool calls parsed from the reply).

* ``finder``: the agent calls the tool *described* as finding a user id by name and zip
  (whatever it is called), then says it is done.
* ``user``: the user simulator asks for one lookup (twice), then ends the conversation.
* ``raising``: an agent (or user) whose every reply raises.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any


def _prompts(prompts: Sequence[str]) -> list[str]:
    return ["" for _ in prompts]


def finder(prompts: Sequence[str]) -> list[str]:
    """Raw completion is never asked of an agent."""
    return _prompts(prompts)


def _finder_chat(messages: Sequence[dict[str, Any]], tools: Sequence[dict[str, Any]]) -> str:
    if any(m["role"] == "tool" for m in messages):
        return "I have found your account. Is there anything else?"
    for t in tools:
        if "user id by first name, last name, and zip" in t["function"]["description"]:
            call = {
                "name": t["function"]["name"],
                "arguments": {"first_name": "Yusuf", "last_name": "Rossi", "zip": "19122"},
            }
            return "<tool_call>" + json.dumps(call) + "</tool_call>"
    return "I cannot find the tool I need."


finder.chat = _finder_chat  # type: ignore[attr-defined]


def user(prompts: Sequence[str]) -> list[str]:
    """Raw completion is never asked of a user simulator."""
    return _prompts(prompts)


def _user_chat(messages: Sequence[dict[str, Any]], tools: Sequence[dict[str, Any]]) -> str:
    # tau2 flips roles for its user simulator: the user's own turns are "assistant"
    said = sum(1 for m in messages if m["role"] == "assistant")
    if said < 2:  # as direct as a request can be (a 0.5B model acts on no less)
        return (
            "Please call the tool find_user_id_by_name_zip with first_name Yusuf, "
            "last_name Rossi and zip 19122."
        )
    return "###STOP###"


user.chat = _user_chat  # type: ignore[attr-defined]


def raising(prompts: Sequence[str]) -> list[str]:
    """Raw completion is never asked."""
    return _prompts(prompts)


def _raising_chat(messages: Sequence[dict[str, Any]], tools: Sequence[dict[str, Any]]) -> str:
    raise RuntimeError("the agent's server is down")


raising.chat = _raising_chat  # type: ignore[attr-defined]

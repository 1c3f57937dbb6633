"""A scripted tool-using agent for generic Inspect tasks in tests, as a ``py:`` model
(``py:tests.probes._generic_agent:agent``) so it reaches Inspect through toolaudit's model
provider exactly as an ``llm`` agent does.

It answers the weather task of ``test_inspect_generic.py``: it finds each tool by its
*description* in the tool list it is offered (so it follows renames and misleading
names), looks up the city named in the question, asks for that city's weather with the
id it read back (unwrapping a reformatted ``{"result": ...}``), and answers with the sky.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

LOOKUP = "Look up a city"
WEATHER = "Get the current weather"


def _tool(tools: Sequence[dict[str, Any]], prefix: str) -> str:
    for t in tools:
        if t["function"]["description"].startswith(prefix):
            return str(t["function"]["name"])
    raise LookupError(f"no tool described as {prefix!r}")


def _value(content: str) -> dict[str, Any]:
    obj = json.loads(content)
    if set(obj) == {"result"}:  # a reformatted return: the same values, wrapped
        obj = obj["result"]
    return dict(obj)


def _call(name: str, arguments: dict[str, Any]) -> str:
    return "<tool_call>" + json.dumps({"name": name, "arguments": arguments}) + "</tool_call>"


def chat(messages: Sequence[dict[str, Any]], tools: Sequence[dict[str, Any]]) -> str:
    """The next turn: a tool call chosen by description, or the answer."""
    results = [m["content"] for m in messages if m["role"] == "tool"]
    if not results:
        question = next(m["content"] for m in reversed(messages) if m["role"] == "user")
        city = re.search(r"in (\w+)", question)
        return _call(_tool(tools, LOOKUP), {"name": city.group(1) if city else ""})
    if len(results) == 1:
        return _call(_tool(tools, WEATHER), {"city_id": _value(results[0]).get("id", "")})
    return f"The sky is {_value(results[-1]).get('sky', 'unknown')}."


def agent(prompts: list[str]) -> list[str]:
    """Raw completions are not used; the chat reply is :func:`chat`."""
    return ["" for _ in prompts]


agent.chat = chat  # type: ignore[attr-defined]


def looping(prompts: list[str]) -> list[str]:
    """An agent whose every reply is a tool call that does not parse: left alone, the
    task's generate() loop would run forever (``py:tests.probes._generic_agent:looping``)."""
    return ["" for _ in prompts]


looping.chat = lambda messages, tools: "<tool_call>{not json</tool_call>"  # type: ignore[attr-defined]

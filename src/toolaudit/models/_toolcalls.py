"""Tool calls out of generated text, in the formats models really emit.

* Qwen / Hermes: ``<tool_call>{"name": ..., "arguments": {...}}</tool_call>`` (an
  unterminated last block, cut by ``max_tokens``, is still tried);
* a fenced block (```` ```json {...} ``` ````) or a bare JSON object with ``name`` and
  ``arguments`` (``parameters`` accepted as a synonym), several in a row allowed;
* OpenAI ``tool_calls`` objects (arguments as a JSON string).

A fragment that is shaped like a call but cannot be parsed is reported in
``parse_errors``; it is never silently dropped.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from toolaudit.traces import ToolCall

_TAGGED = re.compile(r"<tool_call>(.*?)(?:</tool_call>|\Z)", re.S)
_FENCED = re.compile(r"```[a-zA-Z]*[ \t]*\n?(.*?)(?:```|\Z)", re.S)
_DECODER = json.JSONDecoder()


@dataclass(frozen=True, slots=True)
class ParsedCalls:
    """Calls found in a text, the text without them, and one line per failure."""

    text: str
    tool_calls: tuple[ToolCall, ...]
    parse_errors: tuple[str, ...]


def _short(text: str, n: int = 80) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 3] + "..."


def _to_call(obj: Any, index: int, where: str) -> ToolCall | str:
    """A ToolCall from a decoded object, or the reason it is not one."""
    if not isinstance(obj, dict):
        return f"{where}: expected a JSON object, got {type(obj).__name__}"
    name = obj.get("name")
    if not isinstance(name, str) or not name:
        return f"{where}: no string 'name' in {_short(json.dumps(obj))}"
    args = obj.get("arguments", obj.get("parameters", {}))
    if isinstance(args, str):
        try:
            args = json.loads(args) if args.strip() else {}
        except json.JSONDecodeError as exc:
            return f"{where}: arguments of {name!r} are not JSON ({exc.msg})"
    if not isinstance(args, dict):
        return f"{where}: arguments of {name!r} must be an object, got {type(args).__name__}"
    return ToolCall(id=f"call_{index}", name=name, arguments=args)


def _decode_objects(body: str) -> tuple[list[Any], str | None, int]:
    """Decode consecutive JSON values in ``body``; (values, error, characters consumed)."""
    values: list[Any] = []
    pos = 0
    while True:
        while pos < len(body) and body[pos] in " \t\r\n,":
            pos += 1
        if pos >= len(body) or body[pos] not in "{[":
            return values, None, pos
        try:
            value, end = _DECODER.raw_decode(body, pos)
        except json.JSONDecodeError as exc:
            return values, f"invalid JSON ({exc.msg} at char {exc.pos - pos})", pos
        values.extend(value if isinstance(value, list) else [value])
        pos = end


def _looks_like_call(body: str) -> bool:
    return body.lstrip().startswith("{") and '"name"' in body


def parse_tool_calls(text: str) -> ParsedCalls:
    """Parse every tool call in ``text``.

    Example:
        >>> p = parse_tool_calls('<tool_call>{"name": "f", "arguments": {"x": 1}}</tool_call>')
        >>> (p.tool_calls[0].name, p.tool_calls[0].arguments, p.text)
        ('f', {'x': 1}, '')
    """
    calls: list[ToolCall] = []
    errors: list[str] = []
    spans: list[tuple[int, int]] = []

    def take(body: str, where: str) -> None:
        values, err, _ = _decode_objects(body)
        if err is not None:
            errors.append(f"{where}: {err}: {_short(body)}")
        if not values and err is None:
            errors.append(f"{where}: no JSON object: {_short(body)}")
        for v in values:
            got = _to_call(v, len(calls), where)
            if isinstance(got, str):
                errors.append(got)
            else:
                calls.append(got)

    tagged = list(_TAGGED.finditer(text))
    for i, m in enumerate(tagged):
        take(m.group(1), f"<tool_call> block {i + 1}")
        spans.append(m.span())
    if not tagged:
        for i, m in enumerate(_FENCED.finditer(text)):
            if _looks_like_call(m.group(1)):
                take(m.group(1), f"fenced block {i + 1}")
                spans.append(m.span())
    if not spans:
        start = text.find("{")
        if start != -1 and not text[:start].strip() and _looks_like_call(text[start:]):
            values, err, end = _decode_objects(text[start:])
            if values or err:
                take(text[start : start + end] if not err else text[start:], "JSON object")
                spans.append((start, start + end if not err else len(text)))
    rest, last = [], 0
    for a, b in spans:
        rest.append(text[last:a])
        last = b
    rest.append(text[last:])
    return ParsedCalls("".join(rest).strip(), tuple(calls), tuple(errors))


def calls_from_openai(
    tool_calls: Sequence[Any] | None,
) -> tuple[tuple[ToolCall, ...], tuple[str, ...]]:
    """ToolCalls from OpenAI ``message.tool_calls`` (SDK objects or dicts), with errors."""
    calls: list[ToolCall] = []
    errors: list[str] = []
    for i, tc in enumerate(tool_calls or []):
        data = tc if isinstance(tc, dict) else tc.model_dump()
        fn = data.get("function") or {}
        got = _to_call(
            {"name": fn.get("name"), "arguments": fn.get("arguments") or {}},
            len(calls),
            f"tool_calls[{i}]",
        )
        if isinstance(got, str):
            errors.append(got)
        else:
            calls.append(got.model_copy(update={"id": str(data.get("id") or got.id)}))
    return tuple(calls), tuple(errors)


def openai_tool_calls(calls: Sequence[ToolCall]) -> list[dict[str, Any]]:
    """The OpenAI message form of parsed calls (for feeding a reply back into a chat)."""
    return [
        {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
        for c in calls
    ]

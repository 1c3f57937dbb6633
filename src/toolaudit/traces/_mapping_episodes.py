"""Episodes from JSONL in any layout, through a ``FieldMapping`` of ``kind: episodes``.

Messages are read OpenAI-style unless the mapping's ``message`` / ``tool_call`` parts say
otherwise: ``developer`` is read as ``system`` and the legacy ``function`` role as
``tool``; content may be text or a list of parts (their ``text`` joined); tool-call
arguments may be a JSON string (parsed) or an object. A tool message without a name is
named after the call it answers.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from toolaudit.errors import TraceFormatError
from toolaudit.traces._jsonl import iter_json_objects
from toolaudit.traces._mapping import (
    FieldMapping,
    MappingEvalError,
    mapping_failure,
    search,
    select,
)
from toolaudit.traces._numbers import check_score
from toolaudit.traces._schema import Episode, Message, ToolCall
from toolaudit.traces._source import as_text, kind_of

_ROLE_ALIASES = {"developer": "system", "function": "tool", "model": "assistant", "human": "user"}
_ROLES = ("system", "user", "assistant", "tool")


def load_mapped_episodes(path: str | Path, mapping: FieldMapping) -> Iterator[Episode]:
    """Stream Episodes from a JSONL file in a foreign layout, one line at a time.

    Example:
        >>> m = FieldMapping.from_file("openai-chat")
        >>> eps = list(load_mapped_episodes("chats.jsonl", m))  # doctest: +SKIP
    """
    path = Path(path)
    for lineno, obj in iter_json_objects(path):
        try:
            yield _episode(obj, mapping, path=path, line=lineno)
        except MappingEvalError as exc:
            raise mapping_failure(exc, mapping, path=path, line=lineno) from None


def _number(value: Any, expr: str, *, path: Path, line: int, kind: str) -> float:
    if isinstance(value, bool | int | float):
        if kind == "reward":
            check_score(float(value), path=path, line=line, field=expr)
        return float(value)
    raise TraceFormatError(
        path, line, expr, f"{kind} must be a number or boolean, got {type(value).__name__}"
    )


def _episode(obj: dict[str, Any], m: FieldMapping, *, path: Path, line: int) -> Episode:
    def get(key: str, expr: str | None, *, required: bool = False) -> Any:
        if expr is None:
            return None
        return select(obj, m, key, expr, path=path, line=line, required=required)

    task_id = get("task_id", m.task_id, required=True)
    raw_messages = get("messages", m.messages, required=True)
    if raw_messages is not None and not isinstance(raw_messages, list):
        raise TraceFormatError(
            path,
            line,
            m.messages,
            f"expected a list of messages, got {kind_of(raw_messages)}",
        )
    trial = get("trial", m.trial, required=True)
    reward = get("reward", m.reward, required=True)
    seed = get("seed", m.seed, required=True)
    components = get("reward_components", m.reward_components, required=True)
    if components is not None and not isinstance(components, dict):
        raise TraceFormatError(
            path, line, m.reward_components, "reward components must be an object of numbers"
        )
    for k, v in (components or {}).items():
        if isinstance(v, int | float) and not isinstance(v, bool):
            check_score(v, path=path, line=line, field=f"{m.reward_components}.{k}")
    termination = get("termination_reason", m.termination_reason, required=True)
    condition = get("condition", m.condition, required=True)
    return Episode(
        task_id=f"{path.stem}:{line}" if task_id is None else as_text(task_id),
        trial=int(_number(trial, m.trial or "", path=path, line=line, kind="trial"))
        if trial is not None
        else 0,
        seed=int(seed) if isinstance(seed, int) and not isinstance(seed, bool) else None,
        condition=as_text(condition) if condition is not None else "original",
        messages=_messages(raw_messages or [], m, path=path, line=line),
        reward=None
        if reward is None
        else _number(reward, m.reward or "", path=path, line=line, kind="reward"),
        reward_components={
            str(k): float(v)
            for k, v in components.items()
            if isinstance(v, int | float) and not isinstance(v, bool)
        }
        if components
        else None,
        termination_reason=None if termination is None else as_text(termination),
        source={
            "format": "mapped",
            "file": str(path),
            "line": line,
            "episode_id": f"{path.stem}:{line}",
        },
    )


def _text(content: Any) -> str | None:
    if content is None or isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [p.get("text") if isinstance(p, dict) else p for p in content]
        return "\n".join(as_text(p) for p in parts if p is not None)
    return as_text(content)


def _messages(raw: list[Any], m: FieldMapping, *, path: Path, line: int) -> list[Message]:
    mm = m.message
    out: list[Message] = []
    names: dict[str, str] = {}
    for j, msg in enumerate(raw):
        where = f"{m.messages}[{j}]"
        role = search(mm.role, msg)
        if role is None:
            raise TraceFormatError(path, line, f"{where}.{mm.role}", "message has no role")
        role = _ROLE_ALIASES.get(str(role), str(role))
        if role not in _ROLES:
            raise TraceFormatError(
                path,
                line,
                f"{where}.{mm.role}",
                f"unknown role {role!r}; allowed: " + ", ".join(_ROLES),
            )
        content = _text(search(mm.content, msg))
        if role == "tool":
            call_id = search(mm.tool_call_id, msg)
            name = search(mm.name, msg)
            error = search(mm.error, msg) if mm.error else None
            out.append(
                Message(
                    role="tool",
                    content=content or "",
                    tool_call_id=None if call_id is None else as_text(call_id),
                    name=as_text(name) if name is not None else names.get(as_text(call_id)),
                    error=bool(error),
                )
            )
            continue
        calls = _tool_calls(
            search(mm.tool_calls, msg), m, where=f"{where}.{mm.tool_calls}", path=path, line=line
        )
        for c in calls or ():
            names[c.id] = c.name
        out.append(Message(role=role, content=content, tool_calls=calls))  # type: ignore[arg-type]
    return out


def _tool_calls(
    raw: Any, m: FieldMapping, *, where: str, path: Path, line: int
) -> list[ToolCall] | None:
    if raw is None:
        return None
    if not isinstance(raw, list):
        raise TraceFormatError(path, line, where, f"expected a list, got {type(raw).__name__}")
    tm = m.tool_call
    calls = []
    for k, call in enumerate(raw):
        at = f"{where}[{k}]"
        call_id, name = search(tm.id, call), search(tm.name, call)
        if call_id is None or name is None:
            missing = tm.id if call_id is None else tm.name
            raise TraceFormatError(path, line, f"{at}.{missing}", "tool call selected nothing")
        args = search(tm.arguments, call)
        if isinstance(args, str):
            try:
                args = json.loads(args) if args.strip() else {}
            except json.JSONDecodeError as exc:
                raise TraceFormatError(
                    path, line, f"{at}.{tm.arguments}", f"arguments are not JSON ({exc.msg})"
                ) from None
        if args is not None and not isinstance(args, dict):
            raise TraceFormatError(
                path,
                line,
                f"{at}.{tm.arguments}",
                f"arguments must be an object, got {type(args).__name__}",
            )
        calls.append(ToolCall(id=as_text(call_id), name=as_text(name), arguments=args or {}))
    return calls or None

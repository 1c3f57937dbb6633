"""tau-bench (v1) trajectory lists: a JSON list of ``{task_id, reward, info, traj, trial}``.

``traj`` is an OpenAI chat transcript: assistant messages carry ``tool_calls`` whose
``function.arguments`` is a JSON *string*; tool messages carry ``tool_call_id`` and
``name``. tau-bench's environment reports a failed call by returning a string that
starts with ``Error:``, so that prefix sets the tool result's ``error`` flag. Reward
components are the ``r_*`` numbers of ``info.reward_info.info`` (``r_actions`` or
``r_outputs``); a run whose ``reward_info`` is null keeps its reward but no components.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from toolaudit.errors import TraceFormatError
from toolaudit.traces._numbers import check_score
from toolaudit.traces._schema import Episode, Message, ToolCall
from toolaudit.traces._source import as_text, field, read_json_document

logger = logging.getLogger(__name__)

FORMAT = "tau-bench"
_ROLES = ("system", "user", "assistant", "tool")
ERROR_PREFIX = "Error:"


def looks_like_taubench(doc: Any) -> bool:
    """Whether a parsed JSON document is a tau-bench trajectory list."""
    return (
        isinstance(doc, list)
        and len(doc) > 0
        and isinstance(doc[0], dict)
        and "traj" in doc[0]
        and "task_id" in doc[0]
    )


def load_taubench(path: str | Path) -> Iterator[Episode]:
    """Yield one Episode per record of a tau-bench trajectory list, in file order."""
    path = Path(path)
    doc = read_json_document(path)
    if not looks_like_taubench(doc):
        raise TraceFormatError(
            path, None, "[0].traj", "not a tau-bench trajectory list (records need 'traj')"
        )
    source = _file_source(path)
    for i, rec in enumerate(doc):
        yield _episode(rec, where=f"[{i}]", index=i, path=path, source=source)


def _file_source(path: Path) -> dict[str, Any]:
    # tau-bench names its results <env>__<strategy>__<model>__<tasks>x<trials>.json.
    parts = path.stem.split("__")
    named = len(parts) >= 3
    return {
        "format": FORMAT,
        "file": str(path),
        "domain": parts[0] if named else None,
        "agent_strategy": parts[1] if named else None,
        "agent_model": parts[2] if named else None,
    }


def _episode(rec: Any, *, where: str, index: int, path: Path, source: dict[str, Any]) -> Episode:
    task_id = field(rec, "task_id", path=path, where=where, kind=(str, int))
    reward = field(rec, "reward", path=path, where=where, kind=(int, float), default=None)
    traj = field(rec, "traj", path=path, where=where, kind=list)
    info = field(rec, "info", path=path, where=where, kind=dict, default={})
    reward_info = info.get("reward_info")
    components: dict[str, float] | None = None
    if isinstance(reward_info, dict) and isinstance(reward_info.get("info"), dict):
        components = {
            k: float(field(reward_info["info"], k, path=path, kind=(int, float),
                           where=f"{where}.info.reward_info.info"))
            for k, v in reward_info["info"].items()
            if k.startswith("r_") and isinstance(v, int | float) and not isinstance(v, bool)
        } or None  # fmt: skip
    check_score(reward, path=path, line=None, field=f"{where}.reward")
    for k, v in (components or {}).items():
        check_score(v, path=path, line=None, field=f"{where}.info.reward_info.info.{k}")
    return Episode(
        task_id=str(task_id),
        trial=field(rec, "trial", path=path, where=where, kind=int, default=0),
        messages=_messages(traj, where=f"{where}.traj", path=path),
        reward=None if reward is None else float(reward),
        reward_components=components,
        termination_reason=None,
        source={
            **source,
            "episode_id": f"{path.stem}#{index}",
            "index": index,
            "ended_by": info.get("source"),
        },
    )


def _messages(raw: list[Any], *, where: str, path: Path) -> list[Message]:
    out: list[Message] = []
    for j, msg in enumerate(raw):
        at = f"{where}[{j}]"
        role = field(msg, "role", path=path, where=at, kind=str)
        if role not in _ROLES:
            raise TraceFormatError(
                path, None, f"{at}.role", f"unknown role {role!r}; allowed: {', '.join(_ROLES)}"
            )
        content = msg.get("content")
        if role == "tool":
            text = as_text(content)
            out.append(
                Message(
                    role="tool",
                    content=text,
                    tool_call_id=str(field(msg, "tool_call_id", path=path, where=at)),
                    name=msg.get("name"),
                    error=text.startswith(ERROR_PREFIX),
                )
            )
            continue
        out.append(
            Message(
                role=role,
                content=None if content is None else as_text(content),
                tool_calls=_tool_calls(msg.get("tool_calls"), where=f"{at}.tool_calls", path=path),
            )
        )
    return out


def _tool_calls(raw: Any, *, where: str, path: Path) -> list[ToolCall] | None:
    if not raw:
        return None
    if not isinstance(raw, list):
        raise TraceFormatError(path, None, where, f"expected a list, got {type(raw).__name__}")
    calls = []
    for k, call in enumerate(raw):
        at = f"{where}[{k}]"
        fn = field(call, "function", path=path, where=at, kind=dict)
        args = fn.get("arguments") or "{}"
        if isinstance(args, str):
            try:
                args = json.loads(args)
            except json.JSONDecodeError as exc:
                raise TraceFormatError(
                    path, None, f"{at}.function.arguments", f"malformed JSON ({exc.msg})"
                ) from None
        if not isinstance(args, dict):
            raise TraceFormatError(
                path, None, f"{at}.function.arguments", "expected a JSON object of arguments"
            )
        calls.append(
            ToolCall(
                id=str(field(call, "id", path=path, where=at, kind=(str, int))),
                name=field(fn, "name", path=path, where=f"{at}.function", kind=str),
                arguments=args,
            )
        )
    return calls

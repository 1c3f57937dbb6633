"""tau2-bench results files: one JSON document ``{timestamp, info, tasks, simulations}``.

Each simulation becomes one Episode. Assistant messages carry tool calls
``{id, name, arguments}``; tool results are messages with role ``tool``, the call's
``id`` and an ``error`` flag. Runs that terminated early (``agent_error``,
``too_many_errors``) keep their reward (tau2 scores them 0) but have no reward
breakdown, so their components stay ``None``; the termination reason is recorded.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from toolaudit.errors import TraceFormatError
from toolaudit.traces._numbers import check_score
from toolaudit.traces._schema import Episode, Message, ToolCall
from toolaudit.traces._source import as_text, field, read_json_document

logger = logging.getLogger(__name__)

FORMAT = "tau2"
_ROLES = ("system", "user", "assistant", "tool")


def looks_like_tau2(doc: Any) -> bool:
    """Whether a parsed JSON document has the shape of a tau2-bench results file."""
    return isinstance(doc, dict) and isinstance(doc.get("simulations"), list)


def load_tau2(path: str | Path) -> Iterator[Episode]:
    """Yield one Episode per simulation of a tau2-bench results file, in file order.

    Example:
        >>> eps = list(load_tau2("data/tau2/simulations/retail__gpt-4.1__user-gpt-4.1__test40x1.json"))
        ... # doctest: +SKIP
    """
    path = Path(path)
    doc = read_json_document(path)
    if not looks_like_tau2(doc):
        raise TraceFormatError(
            path, None, "simulations", "not a tau2-bench results file (no 'simulations' list)"
        )
    source = file_source(doc, path)
    for i, sim in enumerate(doc["simulations"]):
        yield sim_episode(sim, where=f"simulations[{i}]", index=i, path=path, source=source)


def _obj(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def file_source(doc: dict[str, Any], path: Path) -> dict[str, Any]:
    """Source metadata shared by every episode of one results file (or results folder)."""
    info = _obj(doc.get("info"))
    agent = _obj(info.get("agent_info"))
    user = _obj(info.get("user_info"))
    env = _obj(info.get("environment_info"))
    domain = env.get("domain_name") or (path.stem.split("__")[0] if "__" in path.stem else None)
    return {
        "format": FORMAT,
        "file": str(path),
        "domain": domain,
        "agent_model": agent.get("llm"),
        "user_model": user.get("llm"),
        "git_commit": info.get("git_commit"),
    }


def sim_episode(sim: Any, *, where: str, index: int, path: Path, source: dict[str, Any]) -> Episode:
    """One tau2 simulation as an Episode; ``where`` prefixes field names in errors."""
    task_id = field(sim, "task_id", path=path, where=where, kind=(str, int))
    raw_messages = field(sim, "messages", path=path, where=where, kind=list)
    reward_info = field(sim, "reward_info", path=path, where=where, kind=dict, default=None)
    reward: float | None = None
    components: dict[str, float] | None = None
    if reward_info is not None:
        at = _at(where, "reward_info")
        reward = float(field(reward_info, "reward", path=path, where=at, kind=(int, float)))
        check_score(reward, path=path, line=None, field=f"{at}.reward")
        breakdown = reward_info.get("reward_breakdown")
        if isinstance(breakdown, dict):
            at = _at(at, "reward_breakdown")
            components = {
                str(k): float(field(breakdown, k, path=path, kind=(int, float), where=at))
                for k, v in breakdown.items() if _is_number(v)
            }  # fmt: skip
            for k, v in components.items():
                check_score(v, path=path, line=None, field=f"{at}.{k}")
    sim_id = sim.get("id")
    return Episode(
        task_id=str(task_id),
        trial=field(sim, "trial", path=path, where=where, kind=int, default=0),
        seed=sim.get("seed") if isinstance(sim.get("seed"), int) else None,
        messages=_messages(raw_messages, where=_at(where, "messages"), path=path),
        reward=reward,
        reward_components=components,
        termination_reason=field(
            sim, "termination_reason", path=path, where=where, kind=str, default=None
        ),
        source={
            **source,
            "simulation_id": sim_id,
            "episode_id": str(sim_id) if sim_id else f"{path.stem}#{index}",
            "index": index,
        },
    )


def _at(where: str, key: str) -> str:
    return f"{where}.{key}" if where else key


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _messages(raw: list[Any], *, where: str, path: Path) -> list[Message]:
    out: list[Message] = []
    call_names: dict[str, str] = {}
    for j, msg in enumerate(raw):
        at = f"{where}[{j}]"
        role = field(msg, "role", path=path, where=at, kind=str)
        if role not in _ROLES:
            raise TraceFormatError(
                path, None, f"{at}.role", f"unknown role {role!r}; allowed: {', '.join(_ROLES)}"
            )
        content = msg.get("content")
        if role == "tool":
            call_id = str(field(msg, "id", path=path, where=at, kind=(str, int)))
            out.append(
                Message(
                    role="tool",
                    content=as_text(content),
                    tool_call_id=call_id,
                    name=call_names.get(call_id),
                    error=bool(msg.get("error")),
                )
            )
            continue
        calls = _tool_calls(msg.get("tool_calls"), where=f"{at}.tool_calls", path=path)
        for call in calls or ():
            call_names[call.id] = call.name
        out.append(
            Message(
                role=role,
                content=None if content is None else as_text(content),
                tool_calls=calls,
            )
        )
    return out


def _tool_calls(raw: Any, *, where: str, path: Path) -> list[ToolCall] | None:
    if raw is None:
        return None
    if not isinstance(raw, list):
        raise TraceFormatError(path, None, where, f"expected a list, got {type(raw).__name__}")
    calls = []
    for k, call in enumerate(raw):
        at = f"{where}[{k}]"
        calls.append(
            ToolCall(
                id=str(field(call, "id", path=path, where=at, kind=(str, int))),
                name=field(call, "name", path=path, where=at, kind=str),
                arguments=field(call, "arguments", path=path, where=at, kind=dict, default={}),
            )
        )
    return calls or None

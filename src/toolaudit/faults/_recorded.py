"""Recorded trajectories: tau2-bench results files and tau-bench v1 trajectory lists,
read into the audit's event lists (customer text, agent text, tool steps)."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

from toolaudit.errors import TraceFormatError
from toolaudit.faults._replay import Event, Text, ToolStep, Trajectory

logger = logging.getLogger(__name__)


def _arguments(raw: Any, *, path: Path, where: str) -> dict[str, Any]:
    if isinstance(raw, dict):
        return raw
    if isinstance(raw, str):
        try:
            value = json.loads(raw or "{}")
        except json.JSONDecodeError:
            raise TraceFormatError(path, None, f"{where}.arguments", "not JSON") from None
        if isinstance(value, dict):
            return value
    raise TraceFormatError(path, None, f"{where}.arguments", "not an object")


def _events(messages: list[Any], *, path: Path, where: str) -> tuple[Event, ...]:
    results: dict[str, tuple[str, bool]] = {}
    for m in messages:
        if isinstance(m, dict) and m.get("role") == "tool":
            key = m.get("tool_call_id") or m.get("id")
            results[str(key)] = (str(m.get("content") or ""), bool(m.get("error", False)))
    events: list[Event] = []
    for i, m in enumerate(messages):
        if not isinstance(m, dict) or "role" not in m:
            raise TraceFormatError(path, None, f"{where}[{i}].role", "missing")
        role, content = m["role"], m.get("content")
        if role == "user" and content:
            events.append(Text("user", str(content)))
        elif role == "assistant":
            if content:
                events.append(Text("assistant", str(content)))
            for j, call in enumerate(m.get("tool_calls") or []):
                fn = call.get("function") or call
                name = fn.get("name")
                if not name:
                    raise TraceFormatError(
                        path, None, f"{where}[{i}].tool_calls[{j}].name", "missing"
                    )
                args = _arguments(
                    fn.get("arguments"), path=path, where=f"{where}[{i}].tool_calls[{j}]"
                )
                body, error = results.get(str(call.get("id")), ("", True))
                events.append(ToolStep(str(name), args, body, error))
    return tuple(events)


def load_recorded(path: Path) -> list[Trajectory]:
    """Every trajectory of a tau2 results file or a tau-bench v1 list (ids ``task/trial``)."""
    try:
        doc = json.loads(path.read_text())
    except json.JSONDecodeError as exc:
        raise TraceFormatError(path, exc.lineno, None, f"invalid JSON: {exc.msg}") from None
    out: list[Trajectory] = []
    if isinstance(doc, dict) and "simulations" in doc:
        for n, sim in enumerate(doc["simulations"]):
            where = f"simulations[{n}].messages"
            tid = f"{sim.get('task_id')}/{sim.get('trial', 0)}"
            out.append(Trajectory(tid, _events(sim.get("messages") or [], path=path, where=where)))
    elif isinstance(doc, list):
        for n, ep in enumerate(doc):
            if not isinstance(ep, dict) or "traj" not in ep:
                raise TraceFormatError(path, None, f"[{n}].traj", "missing")
            tid = f"{ep.get('task_id')}/{ep.get('trial', 0)}"
            out.append(Trajectory(tid, _events(ep["traj"], path=path, where=f"[{n}].traj")))
    else:
        raise TraceFormatError(path, None, None, "neither a tau2 results file nor a tau-bench list")
    return out

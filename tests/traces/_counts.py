"""Independent counts computed straight from the public files with ``json`` (no toolaudit
code), to check the loaders and ``traces inspect`` against."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def tau2_counts(path: Path) -> dict[str, Any]:
    doc = json.loads(path.read_text(encoding="utf-8"))
    sims = doc["simulations"]
    rewards = [s["reward_info"]["reward"] for s in sims if s.get("reward_info")]
    return {
        "episodes": len(sims),
        "tasks": len({s["task_id"] for s in sims}),
        "tool_calls": sum(len(m.get("tool_calls") or []) for s in sims for m in s["messages"]),
        "tool_results": sum(m["role"] == "tool" for s in sims for m in s["messages"]),
        "tool_errors": sum(
            bool(m.get("error")) for s in sims for m in s["messages"] if m["role"] == "tool"
        ),
        "mean_reward": sum(rewards) / len(rewards),
        "no_breakdown": sum(
            1 for s in sims if s.get("reward_info") and s["reward_info"]["reward_breakdown"] is None
        ),
    }


def taubench_counts(path: Path) -> dict[str, Any]:
    recs = json.loads(path.read_text(encoding="utf-8"))
    return {
        "episodes": len(recs),
        "tasks": len({r["task_id"] for r in recs}),
        "tool_calls": sum(len(m.get("tool_calls") or []) for r in recs for m in r["traj"]),
        "tool_results": sum(m["role"] == "tool" for r in recs for m in r["traj"]),
        "tool_errors": sum(
            m["content"].startswith("Error:")
            for r in recs
            for m in r["traj"]
            if m["role"] == "tool"
        ),
        "mean_reward": sum(r["reward"] for r in recs) / len(recs),
    }


def domain_counts(path: Path) -> dict[str, Any]:
    tasks = json.loads((path / "tasks.json").read_text(encoding="utf-8"))
    return {
        "tasks": len(tasks),
        "tool_calls": sum(len(t["evaluation_criteria"]["actions"] or []) for t in tasks),
    }

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


def tau2_dir_counts(folder: Path) -> dict[str, Any]:
    """The same counts for tau2's directory layout, read file by file."""
    sims = [
        json.loads(p.read_text(encoding="utf-8"))
        for p in sorted((folder / "simulations").glob("*.json"))
    ]
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
    }


def inspect_counts(path: Path) -> dict[str, Any]:
    """Counts of an Inspect AI log read as plain zip / JSON (no inspect_ai): samples are
    ``samples/*.json`` entries of a ``.eval`` archive, or the ``samples`` list of a
    ``.json`` log; the reward is the first scorer's value ("C" = 1, "I" = 0, numbers)."""
    import zipfile

    if path.suffix == ".eval":
        with zipfile.ZipFile(path) as zf:
            samples = [
                json.loads(zf.read(n))
                for n in zf.namelist()
                if n.startswith("samples/") and n.endswith(".json")
            ]
    else:
        samples = json.loads(path.read_text(encoding="utf-8"))["samples"]
    letters = {"C": 1.0, "I": 0.0, "P": 0.5, "N": 0.0}
    rewards = []
    for s in samples:
        scores = s.get("scores") or {}
        if scores:
            value = next(iter(scores.values()))["value"]
            rewards.append(letters[value] if isinstance(value, str) else float(value))
    messages = [m for s in samples for m in s["messages"]]
    return {
        "episodes": len(samples),
        "tasks": len({s["id"] for s in samples}),
        "epochs": sorted({s["epoch"] for s in samples}),
        "tool_calls": sum(len(m.get("tool_calls") or []) for m in messages),
        "tool_results": sum(m["role"] == "tool" for m in messages),
        "tool_errors": sum(m.get("error") is not None for m in messages if m["role"] == "tool"),
        "mean_reward": sum(rewards) / len(rewards) if rewards else None,
        "errors": sum(s.get("error") is not None for s in samples),
    }

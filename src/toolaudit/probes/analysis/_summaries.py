"""Summaries of an analysed study: the headline findings, the per-agent and per-harness
summaries a report and ``probe.json`` show. Reads Episodes and the analysis's result;
imports no harness.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from toolaudit.probes._seam import REAL_HARNESSES
from toolaudit.probes.agents._researchops import TOOL_USING
from toolaudit.traces import Episode


def _cell(cells: list[dict[str, Any]], policy: str, condition: str) -> dict[str, Any] | None:
    return next((c for c in cells if c["policy"] == policy and c["condition"] == condition), None)


def findings(result: dict[str, Any]) -> dict[str, Any]:
    """The seed's headline checks, read off the analysed cells (null when not run)."""
    cells = result["cells"]
    out: dict[str, Any] = {}
    careful = _cell(cells, "careful", "tool_rename")
    if careful:
        out["careful_tool_rename_vrg"] = careful["vrg"]
        out["careful_tool_rename_vrg_rescored"] = careful["vrg_rescored"]
        out["careful_tool_rename_behavior_changed_rate"] = careful["behavior_changed_rate"]
    overfit = _cell(cells, "overfit", "tool_rename")
    if overfit:
        out["overfit_tool_rename_vrg"] = overfit["vrg"]
        out["overfit_tool_rename_vrg_rescored"] = overfit["vrg_rescored"]
        out["overfit_tool_rename_behavior_changed_rate"] = overfit["behavior_changed_rate"]
    summary = {r["policy"]: r for r in result["policies"]}
    if "shortcut" in summary:
        s = summary["shortcut"]
        out["shortcut_mean_msr"] = s["mean_msr"]
        out["shortcut_mean_abs_vrg"] = s["mean_abs_vrg"]
        out["shortcut_gap_only_rank"] = s["gap_only_rank"]
        out["shortcut_msr_rank"] = s["msr_rank"]
        out["shortcut_misranked_by_gap"] = s["misranked_by_gap"]
    exploit = _cell(cells, "proxy_exploit", "original")
    if exploit:
        out["proxy_exploit_ptd_original"] = exploit["ptd"]
    lowered = {}
    for p in TOOL_USING:
        c = _cell(cells, p, "misleading_names")
        if c:
            lowered[p] = c["vrg"]
    out["misleading_names_vrg"] = lowered
    out["misleading_names_lowers_every_tool_user"] = bool(lowered) and all(
        v > 0 for v in lowered.values()
    )
    return out


def harness_summary(result: dict[str, Any]) -> dict[str, Any]:
    """Per policy and mutated condition of a real-harness study: the gap, the rescored gap
    (by the task's own scorer) and the behaviour change; and the controls."""
    cells = {
        f"{c['policy']}.{c['condition']}": {
            "vrg": c["vrg"],
            "vrg_rescored": c["vrg_rescored"],
            "behavior_changed_rate": c["behavior_changed_rate"],
        }
        for c in result["cells"]
        if c["condition"] != "original"
    }
    return {
        "cells": cells,
        "noop_pass_rate": result["noop_baseline"].get("pass_rate"),
        "positive_control": {r["policy"]: r["verdict"] for r in result["positive_controls"]},
    }


def harness_agents(episodes: Sequence[Episode], study_dir: Path) -> list[dict[str, Any]]:
    """Per policy of a real-harness study: runs, the agent's tool calls and tool calls that
    failed to parse, tokens per conversation (the model's own tokenizer, by role), and
    seconds per conversation from ``timings.jsonl`` (kept out of the records so that a
    rerun's records are byte-identical)."""
    import json

    seconds: dict[str, float] = {}
    timings = study_dir / "timings.jsonl"
    if timings.is_file():
        for line in timings.read_text(encoding="utf-8").splitlines():
            try:
                row = json.loads(line)
                seconds[str(row["config_hash"])] = float(row["seconds"])
            except (json.JSONDecodeError, KeyError, TypeError, ValueError):
                continue  # a torn line of an interrupted run: timing only
    rows: dict[str, dict[str, Any]] = {}
    for ep in episodes:
        info = ep.source.get("agent_info") or {}
        policy = str(ep.source["policy"])
        row = rows.setdefault(policy, {"policy": policy, "model": info.get("model"), "runs": 0,
                                       "tool_calls": 0, "parse_errors": 0,
                                       "runs_without_tool_call": 0, "tokens": {}, "seconds": []})  # fmt: skip
        row["runs"] += 1
        row["tool_calls"] += int(info.get("tool_calls", 0))
        row["parse_errors"] += int(info.get("parse_errors", 0))
        row["runs_without_tool_call"] += int(info.get("tool_calls", 0)) == 0
        by_role = dict(info.get("usage_by_role") or {})
        models = info.get("usage_by_model") or {}
        if models:  # every model of the run (agent and user simulator), summed
            by_role["all"] = {
                k: sum(int(u.get(k) or 0) for u in models.values())
                for k in ("input_tokens", "output_tokens")
            }
        for role, usage in by_role.items():
            tok = row["tokens"].setdefault(role, {"input_tokens": 0, "output_tokens": 0})
            tok["input_tokens"] += int(usage.get("input_tokens") or 0)
            tok["output_tokens"] += int(usage.get("output_tokens") or 0)
        t = seconds.get(str(ep.source["config_hash"]))
        if t is not None:
            row["seconds"].append(t)
    for row in rows.values():
        n = row["runs"]
        row["tokens_per_run"] = {
            role: {k: v / n for k, v in tok.items()} for role, tok in row["tokens"].items()
        }
        secs = row.pop("seconds")
        row["seconds_per_run"] = sum(secs) / len(secs) if secs else None
        row["timed_runs"] = len(secs)
    return list(rows.values())


def agent_summary(episodes: Sequence[Episode]) -> list[dict[str, Any]]:
    """Per model-driven policy: model, sampling, generations and tool calls that failed to
    parse (counted and kept in each record's ``source.agent_info``, never dropped)."""
    rows: dict[str, dict[str, Any]] = {}
    for ep in episodes:
        info = ep.source.get("agent_info")
        if not isinstance(info, dict) or ep.source.get("harness") in REAL_HARNESSES:
            continue
        policy = str(ep.source["policy"])
        row = rows.setdefault(
            policy,
            {
                "policy": policy,
                "model": info.get("model"),
                "temperature": info.get("temperature"),
                "runs": 0,
                "generations": 0,
                "tool_calls": 0,
                "parse_errors": 0,
                "runs_with_parse_errors": 0,
                "runs_without_submit": 0,
                "hit_step_limit": 0,
            },
        )
        n_err = len(info.get("parse_errors", []))
        row["runs"] += 1
        row["generations"] += int(info.get("generations", 0))
        row["tool_calls"] += len(ep.tool_calls())
        row["parse_errors"] += n_err
        row["runs_with_parse_errors"] += n_err > 0
        row["runs_without_submit"] += not info.get("submitted", False)
        row["hit_step_limit"] += bool(info.get("hit_step_limit", False))
    for row in rows.values():
        row["parse_error_rate"] = (
            row["parse_errors"] / row["generations"] if row["generations"] else None
        )
    return list(rows.values())

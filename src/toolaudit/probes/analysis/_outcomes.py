"""Per (policy, condition) of a tau2-bench study: how many runs errored or could not be
scored, and the mean of each of tau2's reward components (DB, ACTION, COMMUNICATE,
ENV_ASSERTION, NL_ASSERTION, as each task's reward basis names them) natively and after
rescoring, so every gap says which component moved. Reads records only."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from toolaudit.traces import Episode


def _means(values: dict[str, list[float]]) -> dict[str, float]:
    return {k: float(np.mean(v)) for k, v in sorted(values.items()) if v}


def run_outcomes(episodes: Sequence[Episode]) -> list[dict[str, Any]]:
    """One row per (policy, condition), in record order (see the module docstring)."""
    rows: dict[tuple[str, str], dict[str, Any]] = {}
    native: dict[tuple[str, str], dict[str, list[float]]] = {}
    rescored: dict[tuple[str, str], dict[str, list[float]]] = {}
    for ep in episodes:
        src = ep.source
        key = (str(src["policy"]), ep.condition)
        row = rows.setdefault(key, {"policy": key[0], "condition": key[1], "runs": 0,
                                    "errored": 0, "unscorable_native": 0,
                                    "unscorable_rescored": 0, "examples": []})  # fmt: skip
        row["runs"] += 1
        if src.get("error"):
            row["errored"] += 1
        elif ep.reward is None:
            row["unscorable_native"] += 1
        if src.get("rescored_reward") is None and not src.get("error"):
            row["unscorable_rescored"] += 1
        note = src.get("error") or src.get("native_unscorable") or src.get("rescored_unscorable")
        if note and len(row["examples"]) < 3:
            row["examples"].append(f"{ep.task_id}: {note}")
        for k, v in (ep.reward_components or {}).items():
            native.setdefault(key, {}).setdefault(k, []).append(float(v))
        for k, v in (src.get("rescored_components") or {}).items():
            rescored.setdefault(key, {}).setdefault(k, []).append(float(v))
    for key, row in rows.items():
        row["components_native"] = _means(native.get(key, {}))
        row["components_rescored"] = _means(rescored.get(key, {}))
    return list(rows.values())

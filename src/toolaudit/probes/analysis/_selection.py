"""The policy-selection experiment (the seed's Appendix B).

Each objective scores the five programs on the first 12 tasks (original condition, all
seed labels) and selects the highest; the choice is then evaluated on the other 13
tasks: held-out verifier pass rate, true quality and PTD on the held-out proxy tasks.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from toolaudit.probes.analysis._runs import Run, ptd_by_task

N_SELECT = 12


def _visible_proxy(runs: Sequence[Run]) -> float:
    vals = [r.proxy for r in runs if r.proxy is not None]
    return float(np.mean(vals)) if vals else 0.0


def _tool_volume(runs: Sequence[Run]) -> float:
    return float(np.mean([r.calls for r in runs]))


def _composite(runs: Sequence[Run]) -> float:
    return float(np.mean([r.reward for r in runs]))


OBJECTIVES: dict[str, Callable[[Sequence[Run]], float]] = {
    "visible_proxy": _visible_proxy,
    "tool_volume": _tool_volume,
    "composite": _composite,
}


def selection_experiment(runs: Sequence[Run], *, n_select: int = N_SELECT) -> dict[str, Any]:
    """Select a program per objective on the first ``n_select`` tasks; evaluate held out."""
    original = [r for r in runs if r.condition == "original"]
    tasks = sorted({r.task for r in original})
    select, held = set(tasks[:n_select]), set(tasks[n_select:])
    policies = list(dict.fromkeys(r.policy for r in original))
    rows = []
    for name, objective in OBJECTIVES.items():
        scores = {
            p: objective([r for r in original if r.policy == p and r.task in select])
            for p in policies
        }
        chosen = max(policies, key=lambda p: (scores[p], -policies.index(p)))
        test = [r for r in original if r.policy == chosen and r.task in held]
        ptd = ptd_by_task(test)
        rows.append(
            {
                "objective": name,
                "selected": chosen,
                "selection_scores": scores,
                "heldout_pass_rate": float(np.mean([r.passed for r in test])) if test else None,
                "heldout_quality": float(np.mean([r.quality for r in test])) if test else None,
                "heldout_ptd": float(np.mean(list(ptd.values()))) if ptd else None,
                "n_heldout_proxy_tasks": len(ptd),
            }
        )
    return {
        "selection_tasks": sorted(select),
        "heldout_tasks": sorted(held),
        "objectives": rows,
    }

"""What is kept of one tau2-bench run: the trajectory so far of a run that raised, the
run's simulation file, and its record (an Episode with tau2's native and rescored scores,
the mutation, the outcome and the agent's usage). Never the analysis.
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
from pathlib import Path
from typing import Any

from toolaudit.probes._mutations import UNPARSED, ToolMutation
from toolaudit.probes.harnesses.tau2._bench import Score, task_digest
from toolaudit.probes.harnesses.tau2._records import (
    HARNESS,
    HARNESS_VERSION,
    RunSettings,
    Tau2RunSpec,
)
from toolaudit.traces import Episode

logger = logging.getLogger(__name__)

PASS_THRESHOLD = 1.0 - 1e-9  # tau2 rewards are 0/1 products: partial credit is a fail


def partial_simulation(orchestrator: Any, spec: Tau2RunSpec, start: float, error: str) -> Any:
    """The trajectory so far of a run that raised, as a simulation."""
    from tau2.data_model.simulation import SimulationRun, TerminationReason
    from tau2.utils.utils import get_now

    try:
        messages = orchestrator.get_trajectory()
    except Exception:  # the trajectory itself is broken: keep none of it
        messages = []
    now = get_now()
    reason = (
        TerminationReason.USER_ERROR
        if error.startswith("user simulator")
        else TerminationReason.AGENT_ERROR
    )
    return SimulationRun(id=spec.config_hash(), task_id=spec.task_id, start_time=now,
                         end_time=now, duration=time.perf_counter() - start,
                         termination_reason=reason, messages=messages)  # fmt: skip


def write_simulation(out: Path, spec: Tau2RunSpec, simulation: Any) -> Path:
    """The run's tau2 simulation as its own file (assembled into results files)."""
    folder = out / "tau2" / "runs" / spec.policy / spec.condition
    folder.mkdir(parents=True, exist_ok=True)
    name = hashlib.sha256(spec.task_id.encode()).hexdigest()[:12]
    path = folder / f"{name}_e{spec.seed_label}.json"
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(simulation.model_dump_json(), encoding="utf-8")
    tmp.replace(path)
    return path


def episode_of(
    spec: Tau2RunSpec,
    task: Any,
    simulation: Any,
    path: Path,
    mutation: ToolMutation,
    native: Score,
    rescored: Score,
    *,
    error: str | None,
    seconds: float,
    speakers: list[Any],
    harness: RunSettings,
) -> Episode:
    """The record of one run: the simulation as an Episode with both scores and the
    source every probe record carries."""
    from toolaudit.traces import sim_episode

    doc = json.loads(simulation.model_dump_json())
    ep = sim_episode(doc, where="", index=0, path=path, source={})
    calls = ep.tool_calls()
    parse_errors = sum(1 for c in calls if c.name == UNPARSED)
    usage: dict[str, dict[str, int | None]] = {}
    for m in simulation.messages:
        u = getattr(m, "usage", None)
        if not isinstance(u, dict) or m.role not in ("assistant", "user"):
            continue
        row = usage.setdefault(m.role, {"input_tokens": 0, "output_tokens": 0})
        for key, out in (
            ("prompt_tokens", "input_tokens"),
            ("completion_tokens", "output_tokens"),
        ):
            if u.get(key) is not None and row[out] is not None:
                row[out] = int(row[out] or 0) + int(u[key])
    reward = native.reward
    rel = path.relative_to(harness.out)
    ended = str(getattr(simulation.termination_reason, "value", simulation.termination_reason))
    source = {
        "harness": HARNESS,
        "harness_version": HARNESS_VERSION,
        "task": f"tau2/{spec.domain}",
        "domain": spec.domain,
        "split": spec.split,
        "task_digest": task_digest(harness.domain.raw_tasks().get(spec.task_id, {})),
        "config_hash": spec.config_hash(),
        "policy": spec.policy,
        "condition": spec.condition,
        "seed_label": spec.seed_label,
        "base_seed": spec.base_seed,
        "passed": reward is not None and reward >= PASS_THRESHOLD,
        "rescored_reward": rescored.reward,
        "rescored_components": rescored.components,
        "native_unscorable": native.error,
        "rescored_unscorable": rescored.error,
        "reward_basis": [
            str(getattr(b, "value", b))
            for b in (
                (task.evaluation_criteria.reward_basis if task.evaluation_criteria else None) or []
            )
        ],  # fmt: skip
        "mutation": mutation.describe(),
        "simulation": str(rel),
        "termination": ended,
        "error": error,
        "scores": native.components,
        "agent_info": {
            "model": harness.model if spec.agent else "scripted",
            "user_model": harness.user_model if spec.agent else "scripted",
            "tool_calls": len(calls),
            "parse_errors": parse_errors,
            "generations": sum(s.generations for s in speakers),
            "usage_by_role": usage,
        },
    }
    logger.info("%s %s %s e%d: reward %s, rescored %s, %.2f s", spec.policy, spec.condition,
                spec.task_id, spec.seed_label, reward, rescored.reward, seconds)  # fmt: skip
    return Episode(
        task_id=f"tau2_{spec.domain}:{spec.task_id}",
        trial=spec.seed_label,
        seed=spec.base_seed,
        condition=spec.condition,
        messages=ep.messages,
        reward=reward,
        reward_components=native.components or None,
        termination_reason=ended,
        source=source,
    )

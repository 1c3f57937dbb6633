"""One run of a tau2-bench task under one condition: tau2's orchestrator with the
mutated environment, the agent and the user, then tau2's evaluator twice (native on the
trajectory as recorded, rescored on the trajectory mapped back), written as a tau2
simulation file and returned as an Episode.

A run that raised (the agent, the user simulator, the environment) is recorded as an
``error`` outcome with the exception's one line and where it came from, never as a reward
of 0; a trajectory tau2's evaluator cannot score is ``unscorable`` (reward None, the
evaluator's one line kept). The analysis counts both and leaves them out of the gaps.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from toolaudit.probes._mutations import tool_mutation
from toolaudit.probes.harnesses.tau2._bench import (
    Domain,
    Score,
    evaluate,
    one_line,
    require_tau2,
)
from toolaudit.probes.harnesses.tau2._episode import (
    episode_of,
    partial_simulation,
    write_simulation,
)
from toolaudit.probes.harnesses.tau2._participants import participants
from toolaudit.probes.harnesses.tau2._records import (
    HARNESS,
    ParticipantError,
    Tau2Reader,
    Tau2RunSpec,
    map_back,
)
from toolaudit.traces import Episode

logger = logging.getLogger(__name__)

_TIMINGS = threading.Lock()  # concurrent conversations append to one timings file


def _tag(participant: Any, where: str) -> None:
    """Make ``participant``'s exceptions say where they came from."""
    inner = participant.generate_next_message

    def generate_next_message(message: Any, state: Any) -> Any:
        try:
            return inner(message, state)
        except Exception as exc:
            raise ParticipantError(where, exc) from exc

    participant.generate_next_message = generate_next_message


class Tau2Harness(Tau2Reader):
    """Runs of one tau2-bench domain (see the module docstring).

    Args:
        domain: ``retail``, ``airline`` or ``telecom``.
        split: the task split (``base``: every task of the default task set).
        data_root: a tau2 data folder of the user's own (None: the package's data).
        out: the study folder (simulation files under ``out/tau2``).
        model: the ``llm`` policy's model (any ``toolaudit.models`` spec).
        user_model: its user simulator's model (default ``model``).
        temperature: sampling temperature of both (tau2's default 0.0 when None).
        max_tokens: the most tokens per reply.
        max_steps: tau2's step limit per conversation (its default 100).
        max_errors: tau2's tool-error limit per conversation (its default 10).
        agent: the ``agent`` policy's class: a name in tau2's registry, or
            ``module:NAME`` (the module is imported first, so its registration runs).
        agent_llm, agent_llm_args: what that class gets as ``llm`` and ``llm_args``
            (tau2's litellm model name and arguments), where it takes them.
    """

    name = HARNESS

    def __init__(
        self,
        domain: str,
        *,
        split: str = "base",
        data_root: str | Path | None = None,
        out: str | Path,
        model: str | None = None,
        user_model: str | None = None,
        temperature: float | None = None,
        max_tokens: int = 256,
        max_steps: int = 100,
        max_errors: int = 10,
        agent: str | None = None,
        agent_llm: str | None = None,
        agent_llm_args: dict[str, Any] | None = None,
    ) -> None:
        self.domain = Domain(domain, split=split, data_root=data_root)
        from toolaudit.probes.harnesses.tau2._agents import register_scripted

        register_scripted()
        self.agent = agent
        self.agent_llm = agent_llm
        self.agent_llm_args = agent_llm_args
        self.out = Path(out)
        self.model = model
        self.user_model = user_model or model
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.max_steps = max_steps
        self.max_errors = max_errors
        self._models: dict[tuple[str, str], Any] = {}

    def task_ids(self) -> Sequence[str]:
        """The split's task ids, in the task set's order."""
        return list(self.domain.tasks())

    def lm(self, spec: str, role: str) -> Any:
        """The loaded model of ``spec`` for ``role`` (one per spec and role)."""
        key = (spec, role)
        if key not in self._models:
            from toolaudit.models import load_model

            self._models[key] = load_model(spec)
        return self._models[key]

    def run(self, spec: Tau2RunSpec) -> Episode:
        """One conversation through tau2's orchestrator, scored twice by its evaluator."""
        require_tau2()
        from tau2.orchestrator.orchestrator import Orchestrator

        task = self.domain.tasks()[spec.task_id]
        mutation = tool_mutation(spec.condition, self.domain.tool_names())
        menv = self.domain.mutated_environment(mutation)
        agent, user, speakers = participants(self, spec, task, menv)
        _tag(agent, "agent")
        _tag(user, "user simulator")
        orchestrator = Orchestrator(
            domain=self.domain.name,
            agent=agent,
            user=user,
            environment=menv.env,
            task=task,
            max_steps=self.max_steps,
            max_errors=self.max_errors,
            seed=spec.run_seed(),
        )
        start = time.perf_counter()
        error: str | None = None
        try:
            simulation = orchestrator.run()
        except Exception as exc:  # the run failed: an error outcome, not the agent's 0
            error = (
                str(exc) if isinstance(exc, ParticipantError) else f"environment: {one_line(exc)}"
            )
            simulation = partial_simulation(orchestrator, spec, start, error)
        seconds = time.perf_counter() - start
        simulation.id = spec.config_hash()
        simulation.trial = spec.seed_label
        native = rescored = Score(None, {}, None)
        if error is None:
            native = evaluate(simulation, task, self.domain.evaluation_domain(mutation))
            if mutation.identity:
                rescored = native
            else:
                canon = map_back(simulation, mutation, menv.canonical)
                rescored = evaluate(canon, task, self.domain.name)
        simulation.reward_info = native.reward_info
        path = write_simulation(self.out, spec, simulation)
        with _TIMINGS, (self.out / "timings.jsonl").open("a", encoding="utf-8") as fh:
            # seconds kept out of the records, so a rerun's records are byte-identical
            fh.write(
                json.dumps({"config_hash": spec.config_hash(), "seconds": round(seconds, 3)}) + "\n"
            )
        return episode_of(spec, task, simulation, path, mutation, native, rescored, error=error,
                          seconds=seconds, speakers=speakers, harness=self)  # fmt: skip

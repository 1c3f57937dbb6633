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

import hashlib
import json
import logging
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from toolaudit.probes._inspect_records import (
    ToolMutation,
    tool_mutation,
)
from toolaudit.probes.agents.script import SCRIPTED
from toolaudit.probes.harnesses.tau2._bench import (
    Domain,
    MutatedEnvironment,
    Score,
    evaluate,
    one_line,
    require_tau2,
    task_digest,
)
from toolaudit.probes.harnesses.tau2._records import (
    HARNESS,
    HARNESS_VERSION,
    TAU2_READER,
    ParticipantError,
    Tau2RunSpec,
    map_back,
    reference,
)
from toolaudit.traces import Episode

logger = logging.getLogger(__name__)

PASS_THRESHOLD = 1.0 - 1e-9  # tau2 rewards are 0/1 products: partial credit is a fail
_TIMINGS = threading.Lock()  # concurrent conversations append to one timings file


def registered_agent(name: str) -> Any:
    """An agent class from tau2's registry: ``NAME``, or ``module:NAME`` whose module is
    imported first (its registration runs then). Refuses in one line otherwise."""
    import importlib

    from toolaudit.errors import ConfigError

    registry = require_tau2()
    module, _, key = name.rpartition(":")
    if module:
        try:
            importlib.import_module(module)
        except Exception as exc:
            raise ConfigError(
                f"--agent {name}: cannot import {module!r} ({one_line(exc)})"
            ) from None
    if key not in registry.get_agents():
        raise ConfigError(
            f"--agent {name}: no agent {key!r} in tau2's registry (registered: "
            f"{', '.join(sorted(registry.get_agents()))})"
        )
    return registry.get_agent_constructor(key)


def _tag(participant: Any, where: str) -> None:
    """Make ``participant``'s exceptions say where they came from."""
    inner = participant.generate_next_message

    def generate_next_message(message: Any, state: Any) -> Any:
        try:
            return inner(message, state)
        except Exception as exc:
            raise ParticipantError(where, exc) from exc

    participant.generate_next_message = generate_next_message


class Tau2Harness:
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

    def canonical(self, episode: Episode) -> Episode:
        """See :class:`Tau2Reader`."""
        return TAU2_READER.canonical(episode)

    def rescore(self, episode: Episode) -> float:
        """See :class:`Tau2Reader`."""
        return TAU2_READER.rescore(episode)

    # -- participants -----------------------------------------------------------------
    def _lm(self, spec: str, role: str) -> Any:
        key = (spec, role)
        if key not in self._models:
            from toolaudit.models import load_model

            self._models[key] = load_model(spec)
        return self._models[key]

    def _participants(
        self, spec: Tau2RunSpec, task: Any, menv: MutatedEnvironment
    ) -> tuple[Any, Any, list[Any]]:
        from toolaudit.probes.harnesses.tau2 import _agents

        tools, policy = menv.shown_tools(), menv.shown_policy()
        if spec.policy in SCRIPTED:
            from toolaudit.probes.agents.script import Cursor

            cursor = Cursor(reference(task))
            agent = _agents.ScriptedAgent(
                tools,
                policy,
                policy=spec.policy,
                cursor=cursor,
                descriptions=self.domain.descriptions(),
            )
            return agent, _agents.ScriptedUser(cursor), []
        if spec.policy == "agent":
            return self._registered_agent(task, menv, tools, policy)
        if self.model is None or self.user_model is None:
            raise ValueError(f"policy {spec.policy!r} needs a model (--model)")
        seed = spec.run_seed()
        temperature = 0.0 if self.temperature is None else self.temperature
        speaker = _agents.Speaker(self._lm(self.model, "agent"), self.model,
                                  temperature=temperature, max_tokens=self.max_tokens,
                                  seed=seed, requestor="assistant")  # fmt: skip
        listener = _agents.Speaker(self._lm(self.user_model, "user"), self.user_model,
                                   temperature=temperature, max_tokens=self.max_tokens,
                                   seed=seed + 7919, requestor="user")  # fmt: skip
        try:
            user_tools = menv.env.get_user_tools()
        except Exception:  # a domain without user tools (tau2 does the same)
            user_tools = None
        agent = _agents.ModelAgent(tools, policy, speaker=speaker)
        user = _agents.ModelUser(
            instructions=str(task.user_scenario), tools=user_tools, speaker=listener
        )
        return agent, user, [speaker, listener]

    def _registered_agent(
        self, task: Any, menv: MutatedEnvironment, tools: list[Any], policy: str
    ) -> tuple[Any, Any, list[Any]]:
        """The user's own agent class from tau2's registry, built as ``tau2 run`` builds
        an agent (tools and policy as shown; ``llm`` and ``llm_args`` where it takes
        them), with the model user simulator (``user_model``) or the instructed user."""
        import inspect as pyinspect

        from toolaudit.probes.harnesses.tau2 import _agents

        cls = registered_agent(str(self.agent))
        params = pyinspect.signature(cls).parameters
        kwargs: dict[str, Any] = {"tools": tools, "domain_policy": policy}
        if "llm" in params:
            kwargs["llm"] = self.agent_llm
        if "llm_args" in params:
            kwargs["llm_args"] = dict(self.agent_llm_args or {})
        agent = cls(**kwargs)
        if self.user_model is None:
            return agent, _agents.InstructedUser(str(task.user_scenario.instructions)), []
        listener = _agents.Speaker(self._lm(self.user_model, "user"), self.user_model,
                                   temperature=self.temperature or 0.0,
                                   max_tokens=self.max_tokens, seed=0, requestor="user")  # fmt: skip
        user = _agents.ModelUser(instructions=str(task.user_scenario), tools=None,
                                 speaker=listener)  # fmt: skip
        return agent, user, [listener]

    # -- one run ----------------------------------------------------------------------
    def run(self, spec: Tau2RunSpec) -> Episode:
        """One conversation through tau2's orchestrator, scored twice by its evaluator."""
        require_tau2()
        from tau2.orchestrator.orchestrator import Orchestrator

        task = self.domain.tasks()[spec.task_id]
        mutation = tool_mutation(spec.condition, self.domain.tool_names())
        menv = self.domain.mutated_environment(mutation)
        agent, user, speakers = self._participants(spec, task, menv)
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
            simulation = self._partial(orchestrator, spec, start, error)
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
        path = self._write(spec, simulation)
        with _TIMINGS, (self.out / "timings.jsonl").open("a", encoding="utf-8") as fh:
            # seconds kept out of the records, so a rerun's records are byte-identical
            fh.write(
                json.dumps({"config_hash": spec.config_hash(), "seconds": round(seconds, 3)}) + "\n"
            )
        return self._episode(spec, task, simulation, path, mutation, native, rescored,
                             error=error, seconds=seconds, speakers=speakers)  # fmt: skip

    def _partial(self, orchestrator: Any, spec: Tau2RunSpec, start: float, error: str) -> Any:
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

    def _write(self, spec: Tau2RunSpec, simulation: Any) -> Path:
        """The run's tau2 simulation as its own file (assembled into results files)."""
        folder = self.out / "tau2" / "runs" / spec.policy / spec.condition
        folder.mkdir(parents=True, exist_ok=True)
        name = hashlib.sha256(spec.task_id.encode()).hexdigest()[:12]
        path = folder / f"{name}_e{spec.seed_label}.json"
        tmp = path.with_suffix(".json.tmp")
        tmp.write_text(simulation.model_dump_json(), encoding="utf-8")
        tmp.replace(path)
        return path

    def _episode(
        self,
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
    ) -> Episode:
        from toolaudit.traces import sim_episode

        doc = json.loads(simulation.model_dump_json())
        ep = sim_episode(doc, where="", index=0, path=path, source={})
        calls = ep.tool_calls()
        from toolaudit.probes._inspect_records import UNPARSED

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
        rel = path.relative_to(self.out)
        ended = str(getattr(simulation.termination_reason, "value", simulation.termination_reason))
        source = {
            "harness": HARNESS,
            "harness_version": HARNESS_VERSION,
            "task": f"tau2/{spec.domain}",
            "domain": spec.domain,
            "split": spec.split,
            "task_digest": task_digest(self.domain.raw_tasks().get(spec.task_id, {})),
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
                    (task.evaluation_criteria.reward_basis if task.evaluation_criteria else None)
                    or []
                )
            ],  # fmt: skip
            "mutation": mutation.describe(),
            "simulation": str(rel),
            "termination": ended,
            "error": error,
            "scores": native.components,
            "agent_info": {
                "model": self.model if spec.agent else "scripted",
                "user_model": self.user_model if spec.agent else "scripted",
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

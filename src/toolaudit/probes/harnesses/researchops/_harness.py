"""The ResearchOps harness: one run of a task × policy × condition × seed as an Episode,
the study's run specs, and how its records are read back (mapped back to canonical terms,
rescored by the composite verifier).

Every run is one :class:`toolaudit.traces.Episode` carrying the hash of its configuration;
the study runner (:func:`toolaudit.probes.run_study`) records, resumes and orders them.
Imports the suite, the verifier, the suite's mutations, the scripted policies and the
shared mutations; never the analysis, the judges, the report or a study.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from toolaudit.errors import ConfigError
from toolaudit.probes.agents._researchops import POLICIES, Agent, make_policy, policy_rank
from toolaudit.probes.agents._view import TaskView
from toolaudit.probes.harnesses.researchops._mutations import (
    CONDITIONS,
    EvalConfig,
    condition_config,
    invert_episode,
)
from toolaudit.probes.harnesses.researchops._suite import (
    N_TASKS,
    ResearchOpsEnv,
    Task,
    make_task,
    task_view,
)
from toolaudit.probes.harnesses.researchops._verifier import CompositeVerifier, Verifier
from toolaudit.traces import Episode, Message, ToolCall

logger = logging.getLogger(__name__)

SUITE = "researchops"
SUITE_VERSION = 1
AgentFactories = Mapping[str, Callable[[], Agent]]


class Environment(Protocol):
    """One run's simulator: executes shown tool names and exposes its end state."""

    def call(self, name: str, arguments: dict[str, Any]) -> tuple[str, bool]:
        """Execute a tool; returns (observation text, is_error)."""
        ...

    def final_state(self) -> dict[str, Any]:
        """What the verifier may read after the run."""
        ...

    def true_quality(self) -> float:
        """Simulator-defined quality (never shown to the verifier)."""
        ...

    def proxy_reward(self) -> float | None:
        """The visible proxy reward, or None without a proxy channel."""
        ...


@dataclass(frozen=True, slots=True)
class RunSpec:
    """One run: task index, policy, condition and seed label."""

    task: int
    policy: str
    condition: str
    seed_label: int
    base_seed: int = 0
    agent: tuple[tuple[str, Any], ...] = ()

    @property
    def instance_seed(self) -> int:
        """The seed of the task instance (shared by every condition of a pair)."""
        return self.base_seed * 1000 + self.seed_label

    def config(self) -> dict[str, Any]:
        """Everything that determines the run (hashed into ``config_hash``)."""
        return {
            "suite": SUITE,
            "suite_version": SUITE_VERSION,
            "task": self.task,
            "policy": self.policy,
            "condition": self.condition,
            "seed": self.instance_seed,
            "eval": condition_config(self.condition).describe(),
            # Only model-driven policies carry options (model, sampling); scripted runs keep
            # the hashes they always had.
            **({"agent": dict(self.agent)} if self.agent else {}),
        }

    def run_seed(self) -> int:
        """The sampling seed of this run: from its config hash, so every condition (the
        repeat included) samples differently and the same command samples the same."""
        return int(self.config_hash()[:8], 16)

    def config_hash(self) -> str:
        """A stable 16-hex-digit hash of :meth:`config`."""
        text = json.dumps(self.config(), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(text.encode()).hexdigest()[:16]

    def sort_key(self) -> tuple[int, int, str, int, int]:
        """Canonical record order: task, policy (built-ins first), condition, seed."""
        return (
            self.task,
            policy_rank(self.policy),
            self.policy,
            list(CONDITIONS).index(self.condition),
            self.seed_label,
        )


def study_specs(
    *,
    tasks: Sequence[int] | None = None,
    policies: Sequence[str] | None = None,
    conditions: Sequence[str] | None = None,
    n_seeds: int = 3,
    base_seed: int = 0,
    agents: AgentFactories | None = None,
    agent_options: Mapping[str, Mapping[str, Any]] | None = None,
) -> list[RunSpec]:
    """Every run of a study, in canonical order.

    ``agents`` adds (or overrides) policies by name: a zero-argument factory returning an
    :class:`~toolaudit.probes.Agent`; by default the five scripted policies run.
    ``agent_options`` (policy -> options such as model and temperature) enter those
    policies' config hashes, so runs with another model are other runs.
    """
    known = {**POLICIES, **(agents or {})}
    pols = list(policies or known)
    conds = list(conditions or CONDITIONS)
    for p in pols:
        if p not in known:
            raise ConfigError.invalid("policy", list(known), p)
    for c in conds:
        if c not in CONDITIONS:
            raise ConfigError.invalid("condition", list(CONDITIONS), c)
    opts = {p: tuple(sorted(o.items())) for p, o in (agent_options or {}).items()}
    specs = [
        RunSpec(t, p, c, s, base_seed, opts.get(p, ()))
        for t in (tasks if tasks is not None else range(N_TASKS))
        for p in pols
        for c in conds
        for s in range(n_seeds)
    ]
    return sorted(specs, key=RunSpec.sort_key)


def _system_text(view: TaskView) -> str:
    tools = [
        {"name": t.name, "description": t.description, "parameters": t.parameters}
        for t in view.tools
    ]
    return f"{view.rubric}\nTools: {json.dumps(tools, separators=(',', ':'))}"


def run_one(
    spec: RunSpec, *, agents: AgentFactories | None = None, verifier: Verifier | None = None
) -> Episode:
    """Execute one run and return its Episode (reward scored under its own condition).

    ``agents`` maps policy names to factories (the scripted policies otherwise);
    ``verifier`` defaults to the composite verifier.
    """
    task = make_task(spec.task, spec.instance_seed)
    config = condition_config(spec.condition)
    view = task_view(task, config)
    env = ResearchOpsEnv(task, config)
    messages = [
        Message(role="system", content=_system_text(view)),
        Message(role="user", content=view.prompt),
    ]

    def call(name: str, arguments: dict[str, Any]) -> tuple[str, bool]:
        cid = f"call_{len(messages) // 2}"
        messages.append(
            Message(role="assistant", tool_calls=[ToolCall(id=cid, name=name, arguments=arguments)])
        )
        text, err = env.call(name, arguments)
        messages.append(Message(role="tool", tool_call_id=cid, name=name, content=text, error=err))
        return text, err

    factory = (agents or {}).get(spec.policy)
    agent = factory() if factory is not None else make_policy(spec.policy)
    reset = getattr(agent, "reset", None)
    if callable(reset):
        reset(spec.run_seed())
    final = agent.run(view, call)
    agent_info = getattr(agent, "run_info", None)
    messages.append(Message(role="assistant", content=final))
    episode = Episode(
        task_id=task.task_id,
        trial=spec.seed_label,
        seed=spec.instance_seed,
        condition=spec.condition,
        messages=messages,
        termination_reason="submitted",
        source={"final_state": env.final_state()},
    )
    score = (verifier or CompositeVerifier()).score(episode, task, config)
    return episode.model_copy(
        update={
            "reward": score.total,
            "reward_components": score.components,
            "source": {
                "suite": SUITE,
                "suite_version": SUITE_VERSION,
                "config_hash": spec.config_hash(),
                "policy": spec.policy,
                "condition": spec.condition,
                "seed_label": spec.seed_label,
                "base_seed": spec.base_seed,
                "passed": score.passed,
                "true_quality": env.true_quality(),
                "proxy_reward": env.proxy_reward(),
                "proxy_task": task.proxy,
                "final_state": env.final_state(),
                **({"agent_info": agent_info} if isinstance(agent_info, dict) else {}),
            },
        }
    )


def task_of(episode: Episode) -> tuple[Task, EvalConfig]:
    """Regenerate a record's task instance (with its hidden target) and configuration."""
    from toolaudit.probes.harnesses.researchops._suite import task_index

    return make_task(task_index(episode.task_id), int(episode.seed or 0)), condition_config(
        episode.condition
    )


class ResearchOpsReader:
    """The ResearchOps records as the analysis reads them: the trajectory mapped back
    through the condition's names and presentation, rescored by the composite verifier
    under the original configuration (the seam's :class:`~toolaudit.probes._seam.RecordReader`)."""

    name = SUITE

    def __init__(self, verifier: Verifier | None = None) -> None:
        self.verifier = verifier or CompositeVerifier()

    def canonical(self, episode: Episode) -> Episode:
        """Names mapped back to the operations executed, observations to compact JSON."""
        _, config = task_of(episode)
        # Conditions that keep names and presentation need no mapping back.
        identity = config.obs_format == "compact" and all(s == sh == a for s, sh, a in config.names)
        return episode if identity else invert_episode(episode, config)

    def rescore(self, episode: Episode) -> float:
        """The mapped-back trajectory scored under the original configuration."""
        task, _ = task_of(episode)
        return self.verifier.score(self.canonical(episode), task, EvalConfig()).total


RESEARCHOPS_READER = ResearchOpsReader()


class ResearchOpsHarness(ResearchOpsReader):
    """The ResearchOps suite behind the seam's ``Harness`` protocol: its task ids, one run
    of a :class:`RunSpec` (:func:`run_one`, with ``agents`` adding policies by name) and
    its records read back (:class:`ResearchOpsReader`)."""

    def __init__(
        self, *, agents: AgentFactories | None = None, verifier: Verifier | None = None
    ) -> None:
        super().__init__(verifier)
        self.agents = agents

    def task_ids(self) -> Sequence[str]:
        """``ro-00`` ... ``ro-24``, in the suite's order."""
        return [make_task(i, 0).task_id for i in range(N_TASKS)]

    def run(self, spec: RunSpec) -> Episode:
        """One run of ``spec``, scored by this harness's verifier."""
        return run_one(spec, agents=self.agents, verifier=self.verifier)

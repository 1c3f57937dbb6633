"""tau2 records: one run's spec (hashed into its record), the reader the analysis uses,
and the mapping of a recorded simulation back to canonical names and returns. Imports
tau2-bench only inside :func:`map_back`; nothing of the analysis or the report."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from toolaudit.probes._mutations import HARNESS_CONDITIONS, NOT_A_TOOL, RecordedReader, ToolMutation
from toolaudit.probes.agents.script import Reference, ReferenceAction
from toolaudit.probes.harnesses.tau2._bench import one_line
from toolaudit.traces import Episode

HARNESS = "tau2"
HARNESS_VERSION = 1


class ParticipantError(RuntimeError):
    """An exception raised inside the agent or the user simulator, tagged with which."""

    def __init__(self, where: str, exc: BaseException) -> None:
        super().__init__(f"{where}: {one_line(exc)}")
        self.where = where


class RunSettings(Protocol):
    """What one run needs of its harness (:class:`~._harness.Tau2Harness` has it): the
    domain, the study folder, the models and their sampling, the user's agent class."""

    domain: Any
    out: Path
    model: str | None
    user_model: str | None
    temperature: float | None
    max_tokens: int
    agent: str | None
    agent_llm: str | None
    agent_llm_args: dict[str, Any] | None

    def lm(self, spec: str, role: str) -> Any:
        """The loaded model of ``spec`` for ``role`` (one per spec and role)."""
        ...


class Tau2Reader(RecordedReader):
    """tau2 records as the analysis reads them: the agent's side of the trajectory mapped
    back through the record's own mutation (the user simulator's own calls, telecom's
    phone, are never mutated and stay as they are), and tau2's evaluator's reward on the
    mapped-back trajectory (``source.rescored_reward``, computed when the run was
    recorded)."""

    name = HARNESS

    def canonical(self, episode: Episode) -> Episode:
        """The agent's calls and their returns in canonical names and presentation."""
        from toolaudit.probes._mutations import mutation_of, unformat_text

        mutation = mutation_of(episode)
        if mutation.identity:
            return episode
        op = mutation.operation_of()
        user_calls = {
            c.id for m in episode.messages if m.role == "user" for c in m.tool_calls or []
        }
        messages = []
        for m in episode.messages:
            if m.role == "assistant" and m.tool_calls:
                calls = [c.model_copy(update={"name": op.get(c.name, NOT_A_TOOL + c.name)})
                         for c in m.tool_calls]  # fmt: skip
                m = m.model_copy(update={"tool_calls": calls})
            elif m.role == "tool" and m.tool_call_id not in user_calls:
                content = m.content
                if content is not None and mutation.obs_format == "wrapped_reversed":
                    content = unformat_text(content)
                name = op.get(m.name or "", NOT_A_TOOL + (m.name or ""))
                m = m.model_copy(update={"name": name, "content": content})
            messages.append(m)
        return episode.model_copy(update={"messages": messages})


TAU2_READER = Tau2Reader()


@dataclass(frozen=True, slots=True)
class Tau2RunSpec:
    """One run: domain, task split, task, policy, condition, epoch (``seed_label``) and
    the model options of a model-driven policy (hashed into the run's configuration)."""

    domain: str
    split: str
    task_id: str
    policy: str
    condition: str
    seed_label: int
    base_seed: int = 0
    task_rank: int = 0
    agent: tuple[tuple[str, Any], ...] = ()

    def config(self) -> dict[str, Any]:
        """Everything that determines the run."""
        return {
            "harness": HARNESS,
            "harness_version": HARNESS_VERSION,
            "domain": self.domain,
            "split": self.split,
            "task": self.task_id,
            "policy": self.policy,
            "condition": self.condition,
            "epoch": self.seed_label,
            "seed": self.base_seed,
            **({"agent": dict(self.agent)} if self.agent else {}),
        }

    def config_hash(self) -> str:
        """A stable 16-hex-digit hash of :meth:`config`."""
        from toolaudit.probes._seam import config_hash

        return config_hash(self.config())

    def run_seed(self) -> int:
        """The run's sampling seed (every condition and epoch samples differently)."""
        return int(self.config_hash()[:8], 16)

    def sort_key(self) -> tuple[Any, ...]:
        """Canonical order: domain, task (split order), policy, condition, epoch."""
        return (
            self.domain,
            self.task_rank,
            self.policy,
            HARNESS_CONDITIONS.index(self.condition),
            self.seed_label,
        )


def reference(task: Any) -> Reference:
    """A tau2 task's reference actions and required information."""
    crit = task.evaluation_criteria
    actions = tuple(
        ReferenceAction(str(a.requestor), a.name, dict(a.arguments))
        for a in ((crit.actions if crit else None) or [])
    )
    return Reference(actions, tuple((crit.communicate_info if crit else None) or []))


def map_back(simulation: Any, mutation: ToolMutation, canonical: Sequence[str]) -> Any:
    """A copy of a simulation in canonical names and returns: each agent call renamed to
    the operation it ran (``not_a_tool:NAME`` where no tool had that name), each of its
    returns replaced by the canonical return the environment gave (in call order)."""
    if mutation.identity:
        return simulation
    from tau2.data_model.message import ToolMessage

    sim = simulation.model_copy(deep=True)
    operation = mutation.operation_of()
    returns = iter(canonical)
    for m in sim.messages:
        if m.role == "assistant" and m.tool_calls:
            for c in m.tool_calls:
                c.name = operation.get(c.name, NOT_A_TOOL + c.name)
        elif isinstance(m, ToolMessage) and m.requestor == "assistant":
            m.content = next(returns)
    return sim

"""Inspect AI as a probe harness: fresh runs of a real Inspect task under a mutated tool
list, each written as a real Inspect log, read back as an Episode and rescored by the
task's own scorer on the log mapped back to canonical names and presentation.

One run is one ``inspect_ai.eval`` of one sample (one task, condition, policy and
epoch), logged to ``DIR/logs/<policy>/<condition>/<sample>_e<epoch>.eval`` (``inspect
view --log-dir DIR/logs`` shows them). Right after the run the log is copied, every tool
call and tool message in it (``sample.messages`` and chat-message lists in the store,
where inspect_evals' tau2 keeps the agent's side) is mapped back to the canonical
operation and its canonical return text, and ``inspect_ai.score`` reruns the task's own
scorer on it: the record carries both the reward the run got and this rescored reward.

Supported tasks: tau2-bench through inspect_evals (``inspect_evals/tau2_retail``,
``tau2_airline``, ``tau2_telecom``), rebuilt from the benchmark's own pieces
(:mod:`toolaudit.probes.harnesses.inspect._tau2`), and any other Inspect task whose solver passes its
tools to ``generate`` (:mod:`toolaudit.probes.harnesses.inspect._generic`: the mutation is applied to
the tools each ``generate`` call offers; a solver that calls the model itself is refused).
"""

from __future__ import annotations

import json
import logging
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from toolaudit.errors import ConfigError
from toolaudit.probes._mutations import (
    HARNESS_CONDITIONS,
    UNPARSED,
    ToolMutation,
    tool_mutation,
)
from toolaudit.probes.harnesses.inspect._records import InspectReader, log_stem
from toolaudit.probes.harnesses.inspect._samples import (
    DEFAULT_MESSAGE_LIMIT,
    DEFAULT_TIME_LIMIT,
    cut_off,
    name_scorers_for_inspect,
    rescore_log,
    score_problem,
    scores_by_name,
)
from toolaudit.probes.harnesses.inspect._tasks import (
    check_task,
    generic_policy_error,
    is_tau2,
    require_inspect,
    task_key,
    task_label,
)
from toolaudit.traces import Episode

logger = logging.getLogger(__name__)

HARNESS = "inspect"
HARNESS_VERSION = 1
PASS_THRESHOLD = 0.5  # Inspect's C/I become 1/0; a numeric score counts as a pass from 0.5


@dataclass(frozen=True, slots=True)
class InspectRunSpec:
    """One run: Inspect task, sample, policy, condition, epoch (``seed_label``), and the
    model options of a model-driven policy (hashed into the run's configuration)."""

    task: str
    sample_id: str
    policy: str
    condition: str
    seed_label: int
    base_seed: int = 0
    sample_rank: int = 0
    agent: tuple[tuple[str, Any], ...] = ()

    def config(self) -> dict[str, Any]:
        """Everything that determines the run."""
        return {
            "harness": HARNESS,
            "harness_version": HARNESS_VERSION,
            "task": task_key(self.task),
            "sample": self.sample_id,
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
        """Canonical order: task, sample (dataset order), policy, condition, epoch."""
        return (
            self.task,
            self.sample_rank,
            self.policy,
            HARNESS_CONDITIONS.index(self.condition),
            self.seed_label,
        )


class InspectHarness(InspectReader):
    """Runs of one Inspect task (see the module docstring).

    Args:
        task: the Inspect task (``inspect_evals/tau2_retail``..., or any task name
            ``inspect_ai.eval`` accepts, such as ``path/to/file.py@name``).
        log_dir: where the Inspect logs go.
        model: the agent's model for the ``llm`` policy: ``openai:MODEL@URL`` (Inspect's
            own OpenAI-compatible client against that server) or a toolaudit spec
            (``embedded:qwen``, ``llama:qwen``, ``hf:DIR``) through the ``toolaudit``
            model provider.
        user_model: tau2's user simulator model (default: ``model``); scripted policies
            always run with the scripted user. A generic task has no user simulator.
        temperature: the model's sampling temperature (overrides the task's own).
        max_turns: the simulator's turn limit (None: the task's own).
        max_tokens: the most tokens per reply of a toolaudit model.
        time_limit: seconds a run may take (Inspect's sample time limit; a model-driven
            run gets :data:`DEFAULT_TIME_LIMIT` without it, and a generic task that sets
            no message limit :data:`DEFAULT_MESSAGE_LIMIT` messages). A run cut off by a
            time limit, or by that message limit, is an ``error`` outcome: it did not
            finish, so its score would measure the cut, not the agent.
    """

    name = HARNESS

    def __init__(
        self,
        task: str,
        *,
        log_dir: str | Path,
        model: str | None = None,
        user_model: str | None = None,
        temperature: float | None = None,
        max_turns: int | None = None,
        max_tokens: int = 256,
        time_limit: int | None = None,
    ) -> None:
        self.task = task
        self.time_limit = time_limit
        self.log_dir = Path(log_dir)
        self.model = model
        self.user_model = user_model or model
        self.temperature = temperature
        self.max_turns = max_turns
        self.max_tokens = max_tokens
        self._domain: Any = None

    @property
    def generic(self) -> bool:
        """Whether the task is a generic Inspect task (not one of the tau2 tasks)."""
        return not is_tau2(self.task)

    @property
    def domain(self) -> Any:
        """The task's pieces: a tau2 domain, or the generic task (loaded on first use)."""
        if self._domain is None:
            from toolaudit.probes.harnesses.inspect._generic import GenericDomain
            from toolaudit.probes.harnesses.inspect._tau2 import Tau2Domain

            require_inspect()
            domain = check_task(self.task)
            if domain is None:
                self._domain = GenericDomain(self.task)
            else:
                self._domain = Tau2Domain(domain, message_limit=self.max_turns)
        return self._domain

    def task_ids(self) -> Sequence[str]:
        """The task's sample ids, in its dataset's order."""
        return list(self.domain.samples())

    def _prepare(self, spec: InspectRunSpec, memo: dict[str, str]) -> tuple[Any, Any]:
        """The one-sample task of a run, and what gives its mutation from the recorded
        sample (a ConfigError where the mutation did not happen)."""
        from toolaudit.probes.harnesses.inspect._generic import GenerateRecorder
        from toolaudit.probes.harnesses.inspect._tau2 import tool_names

        if self.generic:
            recorder = GenerateRecorder(spec.condition, memo)
            return self.domain.build_task(spec.sample_id, recorder), recorder.mutation
        mutation = tool_mutation(spec.condition, tool_names(self.domain.agent_tools()))
        return self.domain.build_task(spec.sample_id, mutation, memo), lambda _sample: mutation

    def run(self, spec: InspectRunSpec) -> Episode:
        """One eval of one sample; returns its Episode with the rescored reward."""
        domain = self.domain
        memo: dict[str, str] = {}
        agent, roles = run_models(self, spec)
        task, mutation_of_run = self._prepare(spec, memo)
        folder = self.log_dir / spec.policy / spec.condition
        folder.mkdir(parents=True, exist_ok=True)
        time_limit = self.time_limit or (DEFAULT_TIME_LIMIT if spec.agent else None)
        message_limit = (
            DEFAULT_MESSAGE_LIMIT
            if self.generic and spec.agent and task.message_limit is None
            else None
        )
        target = folder / f"{log_stem(spec.sample_id)}_e{spec.seed_label}.eval"
        log, seconds = eval_sample(task, agent, roles, target, time_limit, message_limit)
        name_scorers_for_inspect(target, self.task)
        sample = log.samples[0]
        try:
            mutation = mutation_of_run(sample)
        except ConfigError as exc:  # the mutation did not happen: nothing is recorded
            target.unlink()
            failed = ""
            if sample.error is not None:
                first = (sample.error.message.strip().splitlines() or [""])[0]
                failed = f" (the run failed: {first})"
            raise ConfigError(f"--task {self.task!r}: {exc}{failed}; no run was recorded") from None
        cut = cut_off(sample, time_limit, message_limit)
        # a run that failed (the model, a tool or the solver raised) or was cut off has no
        # score to compare: an evaluation failure, never rescored into the agent's 0
        rescored, by_scorer = (
            (None, {})
            if sample.error is not None or cut is not None
            else rescore_log(log, mutation, memo, domain.scorer(), agent_side=self.generic)
        )
        with (self.log_dir.parent / "timings.jsonl").open("a", encoding="utf-8") as fh:
            fh.write(
                json.dumps({"config_hash": spec.config_hash(), "seconds": round(seconds, 3)}) + "\n"
            )
        ep = episode_of(spec, sample, target, mutation, rescored, seconds, len(memo), cut,
                        instance=domain.instance, model=self.model)  # fmt: skip
        if len(by_scorer) > 1:  # a task of several scorers: each one's verdict, both ways
            ep.source["scorers"] = {
                "native": scores_by_name(sample),
                "rescored": by_scorer,
            }
        return ep


def eval_sample(task: Any, agent: Any, roles: dict[str, Any], target: Path,
                time_limit: int | None, message_limit: int | None, *,
                max_samples: int | None = None) -> tuple[Any, float]:  # fmt: skip
    """Run the one-sample ``task`` with ``inspect_ai.eval``, move its log to ``target`` and
    read it back (attachments resolved: a long tool description is stored as one); the
    log and the run's seconds. A run that recorded no sample is refused."""
    from inspect_ai import eval as inspect_eval
    from inspect_ai.log import read_eval_log

    start = time.perf_counter()
    logs = inspect_eval(
        task,
        model=agent,
        model_roles=roles or None,
        log_dir=str(target.parent),
        log_format="eval",
        display="none",
        score_display=False,
        fail_on_error=False,
        log_realtime=False,
        time_limit=time_limit,
        message_limit=message_limit,
        max_samples=max_samples,
    )
    seconds = time.perf_counter() - start
    os.replace(logs[0].location, target)
    log = read_eval_log(str(target), resolve_attachments=True)
    if not log.samples:
        raise ConfigError(f"{target}: the run recorded no sample ({log.status})")
    return log, seconds


def run_models(self: InspectHarness, spec: InspectRunSpec) -> tuple[Any, dict[str, Any]]:
    """The agent's model of a run of ``self`` and the model roles (tau2's user simulator)."""
    from toolaudit.probes.agents.script import Reference
    from toolaudit.probes.harnesses.inspect._generic import GENERIC_POLICIES
    from toolaudit.probes.harnesses.inspect._scripted import SCRIPTED, scripted_models
    from toolaudit.probes.harnesses.inspect._tau2 import tool_descriptions

    if self.generic:
        if spec.policy not in GENERIC_POLICIES:
            raise generic_policy_error(spec.policy)
        if spec.policy == "inert":
            return scripted_models("inert", Reference((), ()), {})[0], {}
    elif spec.policy in SCRIPTED:
        ref = self.domain.reference(spec.sample_id)
        descriptions = tool_descriptions(self.domain.agent_tools())
        agent, user = scripted_models(spec.policy, ref, descriptions)
        return agent, {"user": user}
    if self.model is None:
        raise ConfigError(f"policy {spec.policy!r} needs a model (--model)")
    seed = spec.run_seed()
    agent = inspect_model(self.model, role="agent", seed=seed, temperature=self.temperature,
                          max_tokens=self.max_tokens)  # fmt: skip
    if self.generic:
        return agent, {}
    user = inspect_model(str(self.user_model), role="user", seed=seed + 7919,
                         temperature=self.temperature, max_tokens=self.max_tokens)  # fmt: skip
    return agent, {"user": user}


def episode_of(
    spec: InspectRunSpec,
    sample: Any,
    path: Path,
    mutation: ToolMutation,
    rescored: float | None,
    seconds: float,
    reformatted: int,
    cut: str | None = None,
    *,
    instance: str | None,
    model: str | None,
) -> Episode:
    """The record of one run: the sample as an Episode, no reward where the run failed
    or was cut off, and the source every probe record carries."""
    from toolaudit.traces import sample_episode

    key = None if instance is None else f"StoredAgentState:{instance}:messages"
    ep = sample_episode(sample, path=path, source={"format": "inspect"}, conversation_key=key)
    # a failed or cut-off run: no score
    reward = None if sample.error is not None or cut is not None else ep.reward
    usage = {
        role: {"input_tokens": u.input_tokens, "output_tokens": u.output_tokens}
        for role, u in (sample.role_usage or {}).items()
    }
    model_usage = {
        name: {"input_tokens": u.input_tokens, "output_tokens": u.output_tokens}
        for name, u in (sample.model_usage or {}).items()
    }
    calls = ep.tool_calls()
    parse_errors = [c for c in calls if c.name == UNPARSED]
    source = {
        "harness": HARNESS,
        "harness_version": HARNESS_VERSION,
        "task": spec.task,
        "config_hash": spec.config_hash(),
        "policy": spec.policy,
        "condition": spec.condition,
        "seed_label": spec.seed_label,
        "base_seed": spec.base_seed,
        "passed": reward is not None and reward >= PASS_THRESHOLD,
        "rescored_reward": rescored,
        "mutation": mutation.describe(),
        "log": str(Path(path.parent.parent.name) / path.parent.name / path.name),
        "conversation": ep.source.get("conversation"),
        "termination": ep.termination_reason,
        "error": ep.source.get("error") or cut,
        "scores": ep.reward_components,
        "agent_info": {
            "model": model if spec.agent else "scripted",
            "tool_calls": len(calls),
            "parse_errors": len(parse_errors),
            "reformatted_returns": reformatted,
            "usage_by_role": usage,
            "usage_by_model": model_usage,
        },
    }
    problem = score_problem(sample) if sample.error is None else None
    if problem is not None:  # kept only when there is one: other records are unchanged
        source["native_unscorable"] = problem
    logger.info("%s %s %s e%d: reward %s, rescored %s, %.1f s", spec.policy,
                spec.condition, spec.sample_id, spec.seed_label, reward, rescored, seconds)  # fmt: skip
    return Episode(
        task_id=f"{task_label(spec.task)}:{spec.sample_id}",
        trial=spec.seed_label,
        seed=spec.base_seed,
        condition=spec.condition,
        messages=ep.messages,
        reward=reward,
        reward_components=ep.reward_components,
        termination_reason=ep.termination_reason,
        source=source,
    )


def inspect_model(spec: str, *, role: str, seed: int, temperature: float | None,
                  max_tokens: int) -> Any:  # fmt: skip
    """An Inspect model for a toolaudit spec: ``openai:MODEL@URL`` through Inspect's
    OpenAI-compatible client, anything else through the ``toolaudit`` provider."""
    from inspect_ai.model import GenerateConfig, get_model

    from toolaudit.models import parse_spec

    parsed = parse_spec(spec.split(",", 1)[0])
    if parsed.backend == "openai":
        name, _, url = parsed.target.partition("@")
        config = GenerateConfig(seed=seed, temperature=temperature, max_tokens=max_tokens)
        return get_model(
            f"openai-api/toolaudit/{name}",
            base_url=url or None,
            api_key=os.environ.get("OPENAI_API_KEY", "none"),
            config=config,
            memoize=False,
        )
    import toolaudit.probes.harnesses.inspect._provider  # noqa: F401  (registers the provider)

    return get_model(
        f"toolaudit/{spec}",
        cache_role=role,
        seed=seed,
        temperature=temperature,
        max_tokens=max_tokens,
        memoize=False,
    )

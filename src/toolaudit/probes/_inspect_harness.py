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
(:mod:`toolaudit.probes._inspect_tau2`), and any other Inspect task whose solver passes its
tools to ``generate`` (:mod:`toolaudit.probes._inspect_generic`: the mutation is applied to
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

from toolaudit.errors import ConfigError, MissingDependencyError
from toolaudit.probes._inspect_records import (
    HARNESS_CONDITIONS,
    NOT_A_TOOL,
    UNPARSED,
    ToolMutation,
    log_stem,
    tool_mutation,
    unformat_text,
)
from toolaudit.traces import Episode

logger = logging.getLogger(__name__)

HARNESS = "inspect"
HARNESS_VERSION = 1
PASS_THRESHOLD = 0.5  # Inspect's C/I become 1/0; a numeric score counts as a pass from 0.5
#: Seconds a model-driven run may take when --time-limit is not given.
DEFAULT_TIME_LIMIT = 1800
#: Messages a model-driven run of a generic task may reach when the task sets no limit (an
#: agent whose every reply is an unparseable tool call would otherwise loop forever).
DEFAULT_MESSAGE_LIMIT = 100


def require_inspect() -> None:
    """Refuse, with the install line, when the ``[inspect]`` extra is missing."""
    try:
        import inspect_ai  # noqa: F401
        import inspect_evals  # noqa: F401
    except ModuleNotFoundError:
        raise MissingDependencyError("inspect-ai inspect-evals", "inspect") from None


def check_task(task: str) -> str | None:
    """The tau2 domain of a tau2 task name, None for a generic Inspect task (a file spec
    whose file exists, or a name Inspect's registry knows), a ConfigError otherwise. The
    generic task is loaded later (:class:`~toolaudit.probes._inspect_generic.GenericDomain`).
    """
    from toolaudit.probes._inspect_generic import generic_task_problem
    from toolaudit.probes._inspect_tau2 import TAU2_TASKS

    if task in TAU2_TASKS:
        return TAU2_TASKS[task]
    problem = generic_task_problem(task)
    if problem is not None:
        allowed = ", ".join(TAU2_TASKS) + ", FILE.py@NAME or an Inspect registry name"
        raise ConfigError(f"invalid task={task!r} ({problem}); allowed: {allowed}")
    return None


def is_tau2(task: str) -> bool:
    """Whether ``task`` is one of inspect_evals' tau2 tasks (no Inspect import)."""
    from toolaudit.probes._inspect_tau2 import TAU2_TASKS

    return task in TAU2_TASKS


def task_key(task: str) -> str:
    """The task as a run's configuration (and so its hash and sampling seed) names it: a
    ``FILE.py@NAME`` task by its file's name, so the same file named from another working
    folder (``tasks.py`` or ``/abs/tasks.py``) gives the same runs (the file's path and
    SHA-256 are checked through ``run_config.json``); a registry name as given.

    >>> task_key("../x/tasks.py@weather"), task_key("inspect_evals/tau2_retail")
    ('tasks.py@weather', 'inspect_evals/tau2_retail')
    """
    head, at, name = task.rpartition("@")
    if at and head.endswith(".py"):
        return f"{Path(head).name}@{name}"
    return Path(task).name if task.endswith(".py") else task


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
        from toolaudit.probes._runspec import config_hash

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


def map_back_message(
    m: dict[str, Any],
    mutation: ToolMutation,
    memo: dict[str, str],
    *,
    agent: bool,
    prompt_roles: tuple[str, ...] = ("system",),
) -> None:
    """Map one serialised chat message back in place: tool call names to the operation
    executed, a tool message's function and text to canonical, the policy in a message of
    ``prompt_roles`` to canonical names. On the agent's side (``agent``), a call to a name that was
    no tool under the mutation becomes ``not_a_tool:NAME``, so a memorised canonical name
    that failed to execute is never credited as that operation."""
    op = mutation.operation_of()

    def name(n: Any) -> Any:
        if not isinstance(n, str) or mutation.identity:
            return n
        if n in op:
            return op[n]
        return NOT_A_TOOL + n if agent and n != UNPARSED else n

    text = m.get("content")
    if m.get("role") in prompt_roles and isinstance(text, str):
        m["content"] = mutation.substitute(text, inverse=True)
    elif m.get("role") in prompt_roles and isinstance(text, list):
        for part in text:
            if isinstance(part, dict) and isinstance(part.get("text"), str):
                part["text"] = mutation.substitute(part["text"], inverse=True)
    for call in m.get("tool_calls") or []:
        if isinstance(call, dict):
            call["function"] = name(call.get("function"))
    if m.get("role") != "tool":
        return
    m["function"] = name(m.get("function"))
    content = m.get("content")
    if isinstance(content, str):
        m["content"] = memo.get(content, unformat_text(content))
    elif isinstance(content, list):
        for part in content:
            if isinstance(part, dict) and isinstance(part.get("text"), str):
                part["text"] = memo.get(part["text"], unformat_text(part["text"]))


def _map_back_value(value: Any, mutation: ToolMutation, memo: dict[str, str]) -> Any:
    """A store value with the agent's chat messages in it mapped back: a chat-message list
    (the agent's own), or ``{"role", "message"}`` trajectory entries, of which only the
    agent's (``role == "assistant"``) are the agent's side."""
    if not isinstance(value, list):
        return value
    for item in value:
        if isinstance(item, dict) and isinstance(item.get("message"), dict):
            map_back_message(item["message"], mutation, memo, agent=item.get("role") == "assistant")
        elif isinstance(item, dict) and "role" in item:
            map_back_message(item, mutation, memo, agent=True)
    return value


def map_back_sample(
    sample: Any, mutation: ToolMutation, memo: dict[str, str], *, agent_side: bool = False
) -> Any:
    """A copy of an ``EvalSample`` in canonical names and presentation (see the module
    docstring). ``agent_side``: ``sample.messages`` are the agent's own conversation (a
    generic task), so its user messages (where the names were substituted) and the final
    output are mapped back too."""
    from inspect_ai.log import EvalSample

    data = sample.model_dump(mode="json")
    # sample.messages: the user simulator's side in tau2 (its own tools are not mutated)
    roles = ("system", "user") if agent_side else ("system",)
    for m in data.get("messages") or []:
        map_back_message(m, mutation, memo, agent=agent_side, prompt_roles=roles)
    if agent_side:
        for choice in (data.get("output") or {}).get("choices") or []:
            if isinstance(choice.get("message"), dict):
                map_back_message(choice["message"], mutation, memo, agent=True)
    store = data.get("store") or {}
    data["store"] = {k: _map_back_value(v, mutation, memo) for k, v in store.items()}
    return EvalSample.model_validate(data)


def _name_scorers_for_inspect(path: Path, task: str) -> None:
    """Give a registry task's log its scorers' package-qualified names (``telecom_scorer``
    becomes ``inspect_evals/telecom_scorer``) where Inspect's registry knows them, so
    ``inspect score LOG`` finds them without ``--scorer`` (the rebuilt task records them
    unqualified, which Inspect cannot look up). A file task's log is left as written."""
    from inspect_ai._util.registry import registry_lookup
    from inspect_ai.log import read_eval_log, write_eval_log

    package, slash, _ = task.partition("/")
    if not slash or task.endswith(".py") or ".py@" in task:
        return
    log = read_eval_log(str(path))
    changed = False
    for scorer in log.eval.scorers or []:
        qualified = f"{package}/{scorer.name}"
        if "/" not in scorer.name and registry_lookup("scorer", qualified) is not None:
            scorer.name, changed = qualified, True
    if changed:
        write_eval_log(log, str(path))


def _cut_off(sample: Any, time_limit: int | None, message_limit: int | None) -> str | None:
    """One line when the run was cut off by a time limit, or by the message limit
    toolaudit set (a task's own message limit ends its runs as the task intends)."""
    hit = getattr(sample, "limit", None)
    if hit is None:
        return None
    if hit.type in ("time", "working") and time_limit is not None:
        given = "its --time-limit" if time_limit != DEFAULT_TIME_LIMIT else "the default"
        return f"limit: the run reached {given} of {time_limit} s (--time-limit sets it)"
    if hit.type == "message" and message_limit is not None:
        return (
            f"limit: the run reached {message_limit} messages, toolaudit's limit for a "
            "generic task that sets none (the task's message_limit sets it)"
        )
    return None


def score_problem(sample: Any) -> str | None:
    """Why a finished sample has no score, in one line (None when it has one): no scorer
    ran, or the first scorer's value is not one number (None, a dict, a list)."""
    scores = list((sample.scores or {}).items())
    if not scores:
        return "no scorer gave a score"
    name, score = scores[0]
    value = score.value
    if isinstance(value, str | int | float | bool):
        return None
    shown = (
        f"a {type(value).__name__} of {len(value)}"
        if isinstance(value, dict | list)
        else repr(value)
    )
    return f"scorer {name!r} returned {shown}, not one number"


def scores_by_name(sample: Any) -> dict[str, float | None]:
    """Every scorer's value as a number by its name (None where it gives no number)."""
    from inspect_ai.scorer import value_to_float

    out: dict[str, float | None] = {}
    for name, score in (sample.scores or {}).items():
        value = score.value
        ok = isinstance(value, str | int | float | bool)
        out[str(name)] = float(value_to_float()(value)) if ok else None
    return out


def first_score(sample: Any) -> float | None:
    """The first scorer's value as a number (Inspect's own conversion)."""
    from inspect_ai.scorer import value_to_float

    for score in (sample.scores or {}).values():
        value = score.value
        if isinstance(value, str | int | float | bool):
            return float(value_to_float()(value))
    return None


class InspectHarness:
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
            from toolaudit.probes._inspect_generic import GenericDomain
            from toolaudit.probes._inspect_tau2 import Tau2Domain

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

    def canonical(self, episode: Episode) -> Episode:
        """See :class:`toolaudit.probes._inspect_records.InspectReader`."""
        from toolaudit.probes._inspect_records import INSPECT_READER

        return INSPECT_READER.canonical(episode)

    def rescore(self, episode: Episode) -> float:
        """See :class:`toolaudit.probes._inspect_records.InspectReader`."""
        from toolaudit.probes._inspect_records import INSPECT_READER

        return INSPECT_READER.rescore(episode)

    # -- one run ------------------------------------------------------------------------
    def _models(self, spec: InspectRunSpec) -> tuple[Any, dict[str, Any]]:
        """The agent's model and the model roles (tau2's user simulator)."""
        from toolaudit.probes._inspect_generic import GENERIC_POLICIES
        from toolaudit.probes._inspect_scripted import SCRIPTED, scripted_models
        from toolaudit.probes._inspect_tau2 import tool_descriptions
        from toolaudit.probes.agents.script import Reference

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

    def _prepare(self, spec: InspectRunSpec, memo: dict[str, str]) -> tuple[Any, Any]:
        """The one-sample task of a run, and what gives its mutation from the recorded
        sample (a ConfigError where the mutation did not happen)."""
        from toolaudit.probes._inspect_generic import GenerateRecorder
        from toolaudit.probes._inspect_tau2 import tool_names

        if self.generic:
            recorder = GenerateRecorder(spec.condition, memo)
            return self.domain.build_task(spec.sample_id, recorder), recorder.mutation
        mutation = tool_mutation(spec.condition, tool_names(self.domain.agent_tools()))
        return self.domain.build_task(spec.sample_id, mutation, memo), lambda _sample: mutation

    def run(self, spec: InspectRunSpec) -> Episode:
        """One eval of one sample; returns its Episode with the rescored reward."""
        from inspect_ai import eval as inspect_eval
        from inspect_ai.log import read_eval_log

        domain = self.domain
        memo: dict[str, str] = {}
        agent, roles = self._models(spec)
        task, mutation_of_run = self._prepare(spec, memo)
        folder = self.log_dir / spec.policy / spec.condition
        folder.mkdir(parents=True, exist_ok=True)
        time_limit = self.time_limit or (DEFAULT_TIME_LIMIT if spec.agent else None)
        message_limit = (
            DEFAULT_MESSAGE_LIMIT
            if self.generic and spec.agent and task.message_limit is None
            else None
        )
        start = time.perf_counter()
        logs = inspect_eval(
            task,
            model=agent,
            model_roles=roles or None,
            log_dir=str(folder),
            log_format="eval",
            display="none",
            score_display=False,
            fail_on_error=False,
            log_realtime=False,
            time_limit=time_limit,
            message_limit=message_limit,
        )
        seconds = time.perf_counter() - start
        target = folder / f"{log_stem(spec.sample_id)}_e{spec.seed_label}.eval"
        os.replace(logs[0].location, target)
        _name_scorers_for_inspect(target, self.task)
        # strings over 100 characters (a long tool description) are stored as attachments
        log = read_eval_log(str(target), resolve_attachments=True)
        if not log.samples:
            raise ConfigError(f"{target}: the run recorded no sample ({log.status})")
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
        cut = _cut_off(sample, time_limit, message_limit)
        # a run that failed (the model, a tool or the solver raised) or was cut off has no
        # score to compare: an evaluation failure, never rescored into the agent's 0
        rescored, by_scorer = (
            (None, {})
            if sample.error is not None or cut is not None
            else self._rescore(log, mutation, memo, domain.scorer(), agent_side=self.generic)
        )
        with (self.log_dir.parent / "timings.jsonl").open("a", encoding="utf-8") as fh:
            fh.write(
                json.dumps({"config_hash": spec.config_hash(), "seconds": round(seconds, 3)}) + "\n"
            )
        ep = self._episode(spec, sample, target, mutation, rescored, seconds, len(memo), cut)
        if len(by_scorer) > 1:  # a task of several scorers: each one's verdict, both ways
            ep.source["scorers"] = {
                "native": scores_by_name(sample),
                "rescored": by_scorer,
            }
        return ep

    def _rescore(
        self,
        log: Any,
        mutation: ToolMutation,
        memo: dict[str, str],
        scorer: Any,
        *,
        agent_side: bool = False,
    ) -> tuple[float | None, dict[str, float | None]]:
        """The first scorer's rescored value (the gap's) and every scorer's, by name."""
        from inspect_ai import score

        # map_back_sample builds new samples; the header is shared, not copied
        samples = [map_back_sample(s, mutation, memo, agent_side=agent_side)
                   for s in log.samples or []]  # fmt: skip
        mapped = log.model_copy(update={"samples": samples})
        scored = score(mapped, scorers=scorer, action="overwrite", display="none", copy=False)
        if not scored.samples:
            return None, {}
        return first_score(scored.samples[0]), scores_by_name(scored.samples[0])

    def _episode(
        self,
        spec: InspectRunSpec,
        sample: Any,
        path: Path,
        mutation: ToolMutation,
        rescored: float | None,
        seconds: float,
        reformatted: int,
        cut: str | None = None,
    ) -> Episode:
        from toolaudit.traces import sample_episode

        instance = self.domain.instance
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
                "model": self.model if spec.agent else "scripted",
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
            task_id=f"{_task_label(spec.task)}:{spec.sample_id}",
            trial=spec.seed_label,
            seed=spec.base_seed,
            condition=spec.condition,
            messages=ep.messages,
            reward=reward,
            reward_components=ep.reward_components,
            termination_reason=ep.termination_reason,
            source=source,
        )


def _task_label(task: str) -> str:
    """``tau2_retail`` of ``inspect_evals/tau2_retail``, ``name`` of ``dir/file.py@name``."""
    return task.rsplit("@", 1)[-1] if "@" in task else task.rsplit("/", 1)[-1]


def generic_policy_error(policy: str) -> ConfigError:
    """The refusal of a tau2-only policy on a generic task."""
    return ConfigError(
        f"policy {policy!r} needs the reference actions only tau2 tasks have; a generic "
        "Inspect task runs 'llm' (with --model) and 'inert'"
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
    import toolaudit.probes._inspect_provider  # noqa: F401  (registers the provider)

    return get_model(
        f"toolaudit/{spec}",
        cache_role=role,
        seed=seed,
        temperature=temperature,
        max_tokens=max_tokens,
        memoize=False,
    )

"""Paired runs over tasks × policies × conditions × seeds, recorded as Episodes.

Every run is one :class:`toolaudit.traces.Episode` in ``DIR/records.jsonl`` carrying the
hash of its configuration. Runs execute in parallel (joblib), are appended and flushed
as they finish, and a rerun skips every configuration already recorded, so an
interrupted study resumes. When the study completes the file is rewritten in canonical
order, so two studies with the same seeds give byte-identical records whatever the
parallelism.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Protocol

from toolaudit.errors import ConfigError, TraceFormatError
from toolaudit.probes._mutations import CONDITIONS, EvalConfig, condition_config, invert_episode
from toolaudit.probes._policies import POLICIES, Agent, make_policy
from toolaudit.probes._suite import N_TASKS, ResearchOpsEnv, Task, TaskView, make_task, task_view
from toolaudit.probes._verifier import CompositeVerifier, Verifier
from toolaudit.progress import Progress
from toolaudit.runs import complete_lines, exclusive, refuse_duplicate, write_run_config
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
            _policy_rank(self.policy),
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


def _policy_rank(name: str) -> int:
    return list(POLICIES).index(name) if name in POLICIES else len(POLICIES)


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


Runner = Callable[[Any], Episode]


def _run_chunk(
    specs: Sequence[Any], agents: AgentFactories | None, runner: Runner | None = None
) -> list[str]:
    if runner is not None:
        return [runner(s).model_dump_json() for s in specs]
    return [run_one(s, agents=agents).model_dump_json() for s in specs]


def _read_done(
    path: Path,
    *,
    known: Mapping[str, Any] | None = None,
    truncated: Literal["drop", "skip", "refuse"] = "drop",
) -> dict[str, str]:
    """Config hash -> record line of every complete record already in ``path``.

    A complete last record that lacks only its newline is kept; a truncated final line
    (an interrupted append) is dropped, skipped or refused by ``truncated``
    (:func:`toolaudit.runs.complete_lines`). A run recorded twice is refused naming both
    lines, and so is a record of another study: a hash that is none of ``known`` (the
    study's runs by config hash), named beside a line that is one of them.
    """
    done: dict[str, str] = {}
    seen: dict[str, int] = {}
    for lineno, line in complete_lines(path, truncated=truncated):
        try:
            key = json.loads(line)["source"]["config_hash"]
        except (json.JSONDecodeError, KeyError, TypeError):
            raise TraceFormatError(
                path, lineno, "source.config_hash", "not a probe run record"
            ) from None
        except RecursionError:
            raise TraceFormatError(path, lineno, None, "nested too deeply") from None
        if not isinstance(key, str):
            raise TraceFormatError(path, lineno, "source.config_hash", "not a string")
        refuse_duplicate(seen, key, path=path, line=lineno, field="source.config_hash")
        if known is not None and key not in known:
            ours = next((n for k, n in seen.items() if k in known), None)
            beside = f" (line {ours} is one of them)" if ours is not None else ""
            raise TraceFormatError(
                path, lineno, "source.config_hash",
                f"{key!r} is none of this study's runs{beside}: a record of another study "
                "or of other options; results of different options must not mix",
            )  # fmt: skip
        done[key] = line
    return done


def _chunks(items: Sequence[Any], size: int) -> Iterator[Sequence[Any]]:
    for i in range(0, len(items), size):
        yield items[i : i + size]


def run_study(
    out_dir: str | Path,
    specs: Sequence[Any],
    *,
    n_jobs: int = 1,
    progress: Progress | None = None,
    agents: AgentFactories | None = None,
    runner: Runner | None = None,
    run_config: Mapping[str, Any] | None = None,
    threads: int = 1,
) -> Path:
    """Run ``specs`` into ``out_dir/records.jsonl``; returns the records path.

    Already-recorded configurations are skipped (resume); a record that is none of
    ``specs``, or one recorded twice, is refused before anything is written. Finished runs
    are appended and flushed chunk by chunk; at the end the file is rewritten in canonical
    order. ``run_config`` (the study's options) is written to ``run_config.json`` with
    the first record, so a run that fails before any record does not lock the folder.
    ``agents`` (picklable factories when ``n_jobs > 1``) adds policies by name;
    ``runner`` runs one spec of another harness (each run is written as it finishes);
    ``threads`` > 1 runs that many of its runs at a time in threads (a served model
    answers several conversations at once).
    """
    out = Path(out_dir)
    known = {s.config_hash(): s for s in specs}
    _read_done(out / "records.jsonl", known=known, truncated="skip")  # refused: nothing written
    with exclusive(out):  # a second run is refused; a failed start leaves no folder
        return _run_specs(out, specs, n_jobs=n_jobs, progress=progress, agents=agents,
                          runner=runner, run_config=run_config, threads=threads)  # fmt: skip


def _run_specs(
    out: Path,
    specs: Sequence[Any],
    *,
    n_jobs: int,
    progress: Progress | None,
    agents: AgentFactories | None,
    runner: Runner | None = None,
    run_config: Mapping[str, Any] | None = None,
    threads: int = 1,
) -> Path:
    path = out / "records.jsonl"
    done = _read_done(path, known={s.config_hash(): s for s in specs})
    # Seed label by seed label: a study stopped part-way holds whole replicates (every
    # task and condition at seed 0 first); the file is put in canonical order at the end.
    todo = sorted(
        (s for s in specs if s.config_hash() not in done),
        key=lambda s: (s.seed_label, s.sort_key()),
    )
    logger.info("%d runs recorded, %d to run", len(done), len(todo))
    total, finished = len(specs), len(specs) - len(todo)
    cb = progress or (lambda d, t, label: None)
    cb(finished, total, "runs")
    # Scripted runs take microseconds: batch them. A model-driven run takes seconds: write
    # each one as it finishes, so an interruption loses at most the runs in flight.
    slow = runner is not None or any(s.agent for s in todo)
    chunk = 1 if slow else max(25, len(todo) // (8 * max(1, n_jobs)) + 1)
    parts = list(_chunks(todo, chunk))
    results: Iterable[list[str]]
    pool = None
    if threads > 1 and len(parts) > 1:
        from concurrent.futures import ThreadPoolExecutor

        pool = ThreadPoolExecutor(max_workers=threads)
        results = pool.map(lambda p: _run_chunk(p, agents, runner), parts)
    elif n_jobs == 1 or len(parts) <= 1:
        results = (_run_chunk(p, agents, runner) for p in parts)
    else:
        from joblib import Parallel, delayed

        results = Parallel(n_jobs=n_jobs, return_as="generator")(
            delayed(_run_chunk)(p, agents, runner) for p in parts
        )
    for lines in results:
        if run_config is not None:  # with the first record: a failed start locks nothing
            write_run_config(out, run_config)
            run_config = None
        # opened per chunk: a file replaced under a long study (a checkout, a copy back
        # from a backup) gets the next records, not an unlinked inode that dies with us
        with path.open("a", encoding="utf-8") as fh:
            fh.write("".join(line + "\n" for line in lines))
        finished += len(lines)
        cb(finished, total, "runs")
    if pool is not None:
        pool.shutdown()
    if run_config is not None:
        write_run_config(out, run_config)
    _canonicalise(path)
    return path


def _canonicalise(path: Path) -> None:
    lines = _read_done(path)
    ordered = sorted(lines.values(), key=lambda line: _record_key(json.loads(line)))
    tmp = path.with_suffix(".jsonl.tmp")
    tmp.write_text("".join(line + "\n" for line in ordered), encoding="utf-8")
    os.replace(tmp, path)


def _record_key(obj: dict[str, Any]) -> tuple[Any, ...]:
    src = obj["source"]
    return (
        obj["task_id"],
        _policy_rank(src["policy"]),
        src["policy"],
        list(CONDITIONS).index(src["condition"]) if src["condition"] in CONDITIONS else 99,
        src["seed_label"],
        src["config_hash"],
    )


def task_of(episode: Episode) -> tuple[Task, EvalConfig]:
    """Regenerate a record's task instance (with its hidden target) and configuration."""
    from toolaudit.probes._suite import task_index

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

"""A probe study on a real harness (``toolaudit probe run --harness inspect --task TASK``):
which samples, policies, conditions and epochs run, the model options, the analysis.

Runs go through the same resumable folder mechanism as the ResearchOps study
(``records.jsonl`` appended run by run, ``run_config.json`` refusing changed options, a
lock against a second writer), and the records are analysed by the same
:func:`~toolaudit.probes.analyze_study`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from toolaudit.errors import ConfigError, check_min
from toolaudit.models import check_temperature
from toolaudit.probes._mutations import HARNESS_CONDITIONS

if TYPE_CHECKING:
    from toolaudit.probes.harnesses.inspect._harness import InspectHarness, InspectRunSpec
    from toolaudit.progress import Progress

SCRIPTED_POLICIES = ("careful", "overfit", "inert")
HARNESS_POLICIES = (*SCRIPTED_POLICIES, "lexical", "llm")


@dataclass(frozen=True, slots=True)
class HarnessStudyConfig:
    """One study on an Inspect task.

    ``task``: a tau2 task (``inspect_evals/tau2_retail``...) or any other Inspect task
    whose solver passes tools to ``generate`` (``path/to/file.py@name``, a registry name).
    ``policies``: the scripted agents (``careful``, ``overfit``, ``inert``) and/or
    ``llm``, the agent driven by ``model`` (with ``user_model`` as tau2's user simulator,
    default ``model``); ``None`` runs the three scripted agents, or ``llm`` and ``inert``
    (the no-op baseline) when a model is given. A generic task runs ``llm`` and ``inert``
    only (``careful`` and ``overfit`` need tau2's reference actions) and has no user
    simulator (no ``user_model``, no ``max_turns``). ``conditions`` (``original`` always
    runs), ``epochs`` per (sample, condition), the first ``limit`` samples or the named
    ``task_ids``; ``temperature`` overrides the task's sampling temperature for a model,
    ``max_turns`` the simulator's turn limit, ``time_limit`` the seconds a run may take.
    ``max_samples``: the scripted agents' runs of one (policy, condition, epoch) of a tau2
    task go in one Inspect eval and one log, that many samples at a time (records as one
    eval per run gives them; model-driven runs stay one eval each). Then the analysis
    (``margin``, ``n_boot``).
    """

    task: str
    policies: tuple[str, ...] | None = None
    conditions: tuple[str, ...] | None = None
    epochs: int = 1
    limit: int | None = None
    task_ids: tuple[str, ...] | None = None
    model: str | None = None
    user_model: str | None = None
    temperature: float | None = None
    max_turns: int | None = None
    max_tokens: int = 256
    time_limit: int | None = None
    seed: int = 0
    n_jobs: int = 1
    margin: float = 0.10
    n_boot: int = 2000
    max_samples: int | None = None

    def __post_init__(self) -> None:
        from toolaudit.probes.harnesses.inspect._tasks import check_task
        from toolaudit.probes.study._probe import check_analysis

        generic = check_task(self.task) is None
        _check_numbers(self)
        check_analysis(margin=self.margin, seed=self.seed, n_boot=self.n_boot)
        for p in self.policies or (() if self.policies is None else ("",)):
            if p not in HARNESS_POLICIES:
                raise ConfigError.invalid("policies", list(HARNESS_POLICIES), p)
        given = self.policies or ()
        dup = sorted({p for p in given if given.count(p) > 1})
        if dup:  # refused before the folder is touched (it would run every run twice)
            raise ConfigError(f"invalid policies: {dup[0]!r} is given twice")
        if self.task_ids is not None and not self.task_ids:
            raise ConfigError("--task-ids: no sample id given")
        for c in self.conditions or ():
            if c not in HARNESS_CONDITIONS:
                raise ConfigError.invalid("conditions", list(HARNESS_CONDITIONS), c)
        if "llm" in self.run_policies() and self.model is None:
            raise ConfigError("policy 'llm' needs --model")
        if generic:
            self._check_generic()
        if self.user_model is not None and self.model is None:
            raise ConfigError("--user-model is the llm policy's user simulator: give --model")
        if self.limit is not None and self.task_ids is not None:
            raise ConfigError("give either --limit or --task-ids, not both")

    def _check_generic(self) -> None:
        from toolaudit.probes.harnesses.inspect._tasks import generic_policy_error

        for p in self.run_policies():
            if p in ("careful", "overfit", "lexical"):
                raise generic_policy_error(p)
        for field, given in (("user_model", self.user_model), ("max_turns", self.max_turns)):
            if given is not None:
                raise ConfigError._named(
                    field, f": {self.task!r} is a generic Inspect task, which has no user "
                    "simulator (tau2 tasks only)"
                )  # fmt: skip
        if self.policies is None and self.model is None:
            raise ConfigError(
                f"--task {self.task!r} is a generic Inspect task: without --model only the "
                "no-op agent would run and nothing would be probed; give the agent with "
                "--model (openai:MODEL@URL for a served model, py:module:function for your "
                "own scripted one, or an embedded model such as llama:qwen), or "
                "--policies inert for the no-op baseline alone"
            )

    def run_policies(self) -> tuple[str, ...]:
        """The policies this study runs."""
        from toolaudit.probes.harnesses.inspect._tasks import is_tau2

        if self.policies is not None:
            return self.policies
        if self.model is not None:
            return ("llm", "inert")
        return SCRIPTED_POLICIES if is_tau2(self.task) else ("inert",)

    def run_conditions(self) -> tuple[str, ...]:
        """The conditions this study runs (``original`` first, always)."""
        given = self.conditions or HARNESS_CONDITIONS
        return tuple(c for c in HARNESS_CONDITIONS if c == "original" or c in given)

    def harness(self, study: Path) -> InspectHarness:
        """The harness that runs this study's records (logs under ``study/logs``)."""
        from toolaudit.probes.harnesses.inspect._harness import InspectHarness

        return InspectHarness(
            self.task,
            log_dir=Path(study) / "logs",
            model=self.model,
            user_model=self.user_model,
            temperature=self.temperature,
            max_turns=self.max_turns,
            max_tokens=self.max_tokens,
            time_limit=self.time_limit,
        )

    def options(self) -> dict[str, Any]:
        """The options that change results (``run_config.json``)."""
        return {
            "harness": "inspect",
            "task": _resolved_task(self.task),
            "policies": list(self.run_policies()),
            "conditions": list(self.run_conditions()),
            "epochs": self.epochs,
            "limit": self.limit,
            "task_ids": list(self.task_ids) if self.task_ids is not None else None,
            "seed": self.seed,
            "model": self.model,
            "user_model": (self.user_model or self.model) if self._user_simulated() else None,
            "temperature": self.temperature,
            "max_turns": self.max_turns,
            "max_tokens": self.max_tokens if self.model else None,
            "time_limit": self.time_limit,
            "packages": _versions(),
            **_task_file_digest(self.task),
        }

    def _user_simulated(self) -> bool:
        from toolaudit.probes.harnesses.inspect._tasks import is_tau2

        return self.model is not None and is_tau2(self.task)


def _check_numbers(config: HarnessStudyConfig) -> None:
    """The study's counts and limits, each checked by name."""
    check_min("epochs", config.epochs, 1)
    check_min("n_jobs", config.n_jobs, 1)
    check_min("max_tokens", config.max_tokens, 1)
    for name in ("limit", "max_turns", "time_limit", "max_samples"):
        if getattr(config, name) is not None:
            check_min(name, getattr(config, name), 1)
    if config.temperature is not None:
        check_temperature("temperature", config.temperature)


def _resolved_task(task: str) -> str:
    """A ``FILE.py[@NAME]`` task with its file as an absolute path (``run_config.json``
    then names it relative to the study folder), so the same file named from another
    working folder is the same task; a registry name as given."""
    from toolaudit.probes.harnesses.inspect._generic import _spec_file

    file = _spec_file(task)
    if file is None:
        return task
    name = task[len(str(file)) :] if task.startswith(str(file)) else ""
    return str(file.resolve()) + name


def _task_file_digest(task: str) -> dict[str, str]:
    """``{"task_sha256": ...}`` of a ``FILE.py[@NAME]`` task's file, so a resume after the
    file was edited is refused; nothing for a registry task (its package version is
    recorded instead)."""
    import hashlib

    from toolaudit.probes.harnesses.inspect._generic import _spec_file

    file = _spec_file(task)
    if file is None or not file.is_file():
        return {}
    return {"task_sha256": hashlib.sha256(file.read_bytes()).hexdigest()}


def _versions() -> dict[str, str]:
    """Versions of the Inspect packages (recorded with every study)."""
    from importlib.metadata import PackageNotFoundError, version

    out = {}
    for name in ("inspect-ai", "inspect-evals"):
        try:
            out[name] = version(name)
        except PackageNotFoundError:
            out[name] = "not installed"
    return out


def harness_specs(config: HarnessStudyConfig, harness: InspectHarness) -> list[InspectRunSpec]:
    """Every run of the study, in canonical order."""
    from toolaudit.probes._seam import choose_ids
    from toolaudit.probes.harnesses.inspect._harness import InspectRunSpec

    ids = list(harness.task_ids())
    rank = {sid: i for i, sid in enumerate(ids)}
    chosen = choose_ids(ids, task_ids=config.task_ids, limit=config.limit, what=config.task)
    agent: tuple[tuple[str, Any], ...] = ()
    if config.model is not None:
        agent = tuple(sorted(
            (k, v) for k, v in config.options().items()
            if k in ("model", "user_model", "temperature", "max_turns", "max_tokens", "time_limit")
        ))  # fmt: skip
    specs = [
        InspectRunSpec(
            config.task, sid, p, c, e, config.seed, rank[sid], agent if p == "llm" else ()
        )  # fmt: skip
        for sid in chosen
        for p in config.run_policies()
        for c in config.run_conditions()
        for e in range(config.epochs)
    ]
    return sorted(specs, key=lambda s: s.sort_key())


def run_harness_records(
    config: HarnessStudyConfig, study: Path, *, progress: Progress | None = None
) -> Path:
    """Run (or resume) the study's records into ``study/records.jsonl``."""
    from toolaudit.probes.harnesses.inspect._tasks import require_inspect
    from toolaudit.probes.study._run import run_study
    from toolaudit.probes.study._runconfig import check_run_config

    require_inspect()
    options = config.options()
    check_run_config(study, options)
    harness = config.harness(study)
    specs = harness_specs(config, harness)  # a bad sample id writes nothing
    if config.model is not None:
        from toolaudit.models import check_model, load_model

        for spec in dict.fromkeys([config.model, config.user_model or config.model]):
            # a malformed spec, a missing file or a server that does not answer fails
            # here, in one line, before the folder is touched
            check_model(load_model(spec), generates=True)
    # run_config.json is written with the first record: a failed start locks nothing
    existed = study.exists()
    try:
        return run_study(
            study, specs, n_jobs=config.n_jobs, progress=progress,
            runner=_runner(harness, config.max_samples), run_config=options,
        )  # fmt: skip
    except ConfigError:
        # refused at its first run (a task that offers no tools, a mutation that could not
        # happen): a folder this command created and holds no record goes with it
        if not existed and not (study / "records.jsonl").exists():
            import shutil

            shutil.rmtree(study, ignore_errors=True)
        raise


def _runner(harness: InspectHarness, max_samples: int | None) -> Any:
    """One eval per run, or with ``max_samples`` the scripted runs of one (policy,
    condition, epoch) in one eval (:mod:`toolaudit.probes.harnesses.inspect._batch`)."""
    if max_samples is None:
        return harness.run
    from functools import partial

    from toolaudit.probes.harnesses.inspect._batch import batch_key, run_batch
    from toolaudit.probes.study._run import BatchRunner

    return BatchRunner(run=partial(run_batch, harness, max_samples=max_samples),
                       key=batch_key, size=10**6)  # fmt: skip


def run_harness_study(
    config: HarnessStudyConfig, study: Path, *, progress: Progress | None = None
) -> dict[str, Any]:
    """Run (or resume) and analyse; returns the ``probe.json`` document."""
    from toolaudit.probes.study._probe import analyze_study

    run_harness_records(config, study, progress=progress)
    return analyze_study(study, margin=config.margin, seed=config.seed, n_boot=config.n_boot,
                         write=False, progress=progress)  # fmt: skip

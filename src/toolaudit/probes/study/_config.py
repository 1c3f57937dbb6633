"""A probe study as the user asks for it (``toolaudit probe run``): which tasks,
policies, conditions and seeds run, the LLM agent's model and sampling, and how the
records are analysed (margin, bootstrap, judge). Checked on construction; run by
:meth:`toolaudit.probes.ProbeAudit.run` into the study folder itself."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from toolaudit.errors import ConfigError, check_choice, check_min
from toolaudit.models import check_temperature

if TYPE_CHECKING:
    from toolaudit.probes.judges._records import VerdictRecord
    from toolaudit.probes.judges._study import JudgeConfig
    from toolaudit.progress import Progress


@dataclass(frozen=True, slots=True)
class ProbeStudyConfig:
    """One study on ``suite``: the first ``tasks`` tasks (``None``: all), the
    ``policies`` (``None``: the scripted ones; ``"llm"`` adds the agent driven by
    ``model``, sampled at ``temperature`` for at most ``max_steps`` steps), the
    ``conditions`` (``None``: all; ``original`` is always run), ``n_seeds`` per cell from
    ``seed``, ``n_jobs`` worker processes; then the analysis (``margin``, ``n_boot``,
    and the judge audit on ``verdicts`` or a real ``judge``, or skipped)."""

    suite: str = "researchops"
    n_seeds: int = 3
    seed: int = 0
    n_jobs: int = 1
    tasks: int | None = None
    policies: tuple[str, ...] | None = None
    conditions: tuple[str, ...] | None = None
    model: str | None = None
    temperature: float = 0.7
    max_steps: int = 10
    margin: float = 0.10
    n_boot: int = 2000
    judge: JudgeConfig | None = None
    verdicts: tuple[VerdictRecord, ...] | None = None

    def __post_init__(self) -> None:
        from toolaudit.probes.agents._researchops import POLICIES
        from toolaudit.probes.harnesses.researchops._mutations import CONDITIONS
        from toolaudit.probes.harnesses.researchops._suite import N_TASKS
        from toolaudit.probes.study._probe import SUITES, check_analysis

        check_choice("suite", self.suite, SUITES)
        check_min("n_jobs", self.n_jobs, 1)
        check_min("n_seeds", self.n_seeds, 1)
        check_min("max_steps", self.max_steps, 1)
        check_temperature("temperature", self.temperature)
        if self.tasks is not None and not 1 <= self.tasks <= N_TASKS:
            raise ConfigError.invalid("tasks", f"an integer in [1, {N_TASKS}]", self.tasks)
        check_analysis(margin=self.margin, seed=self.seed, n_boot=self.n_boot)
        known = [*POLICIES, "llm"]
        for p in self.policies or (() if self.policies is None else ("",)):
            if p not in known:
                raise ConfigError.invalid("policies", known, p)
        for c in self.conditions or ():
            if c not in CONDITIONS:
                raise ConfigError.invalid("conditions", list(CONDITIONS), c)
        if self.model is not None and not self.llm:
            raise ConfigError("model drives the 'llm' policy: add 'llm' to the policies")
        if self.verdicts is not None and self.judge is not None:
            raise ConfigError("give either judge verdicts or a judge model, not both")

    @property
    def llm(self) -> bool:
        """Whether the LLM agent runs."""
        return self.policies is not None and "llm" in self.policies

    def harness(self, study: Path | None = None) -> Any:
        """The ResearchOps harness this study runs on (the seam's ``Harness``; its ``llm``
        policy driven by ``model``). ``study`` is unused: the suite writes no files."""
        from toolaudit.probes.harnesses.researchops._harness import ResearchOpsHarness

        return ResearchOpsHarness(agents=_llm_agents(self))


def _llm_agents(config: ProbeStudyConfig) -> dict[str, Any] | None:
    """The ``llm`` policy's factory, when the study runs it."""
    from toolaudit.probes.agents._llm import DEFAULT_MODEL, llm_factory

    if not config.llm:
        return None
    model = config.model or DEFAULT_MODEL
    return {"llm": llm_factory(model, temperature=config.temperature, max_steps=config.max_steps)}


def _conditions(given: Sequence[str] | None) -> list[str] | None:
    """``original`` first, then the given conditions in the canonical order, each once."""
    from toolaudit.probes.harnesses.researchops._mutations import CONDITIONS

    if given is None:
        return None
    chosen = {"original", *given}
    return [c for c in CONDITIONS if c in chosen]


def run_records(config: ProbeStudyConfig, study: Path, *, progress: Progress | None = None) -> Path:
    """Run (or resume) the study's runs into ``study/records.jsonl``; returns its path."""
    from toolaudit.probes.agents._llm import DEFAULT_MODEL
    from toolaudit.probes.study._probe import run_probe_study

    model = (config.model or DEFAULT_MODEL) if config.llm else None
    agents = _llm_agents(config)
    sampling = {"temperature": config.temperature, "max_steps": config.max_steps}
    judge = config.judge
    options = {
        "model": model,
        "temperature": config.temperature if config.llm else None,
        "max_steps": config.max_steps if config.llm else None,
        "judge_model": judge.model if judge else None,
        "judge_temperature": judge.temperature if judge else None,
        "judge_records": judge.n_records if judge else None,
        "judge_repeats": judge.n_repeats if judge else None,
        "judge_views": list(judge.views) if judge else None,
        "judge_prompt": judge.prompt if judge else None,
    }
    return run_probe_study(
        study,
        suite=config.suite,
        n_seeds=config.n_seeds,
        seed=config.seed,
        n_jobs=config.n_jobs,
        tasks=list(range(config.tasks)) if config.tasks is not None else None,
        policies=list(config.policies) if config.policies is not None else None,
        conditions=_conditions(config.conditions),
        progress=progress,
        agents=agents,
        agent_options={"llm": {"model": model, **sampling}} if config.llm else None,
        options=options,
    )


def run_study(
    config: ProbeStudyConfig, study: Path, *, progress: Progress | None = None
) -> dict[str, Any]:
    """Run (or resume) the study into ``study`` and analyse its records; returns the
    ``probe.json`` document (written by the caller)."""
    from toolaudit.probes.study._probe import analyze_study

    run_records(config, study, progress=progress)
    return analyze_study(
        study,
        margin=config.margin,
        seed=config.seed,
        n_boot=config.n_boot,
        verdicts=list(config.verdicts) if config.verdicts is not None else None,
        judge=config.judge,
        write=False,
        progress=progress,
    )

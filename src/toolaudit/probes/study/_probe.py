"""The probe study end to end: run the controlled suite, analyse, write ``probe.json``."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from toolaudit.errors import ConfigError, check_min
from toolaudit.probes._seam import REAL_HARNESSES
from toolaudit.probes.agents._llm import shared_model
from toolaudit.probes.analysis._findings import study_findings
from toolaudit.probes.analysis._runs import analyze_runs
from toolaudit.probes.analysis._selection import selection_experiment
from toolaudit.probes.analysis._summaries import (
    agent_summary,
    findings,
    harness_agents,
    harness_summary,
)
from toolaudit.probes.analysis._transcripts import transcript_pairs
from toolaudit.probes.harnesses.researchops._harness import SUITE, AgentFactories, study_specs
from toolaudit.probes.harnesses.researchops._mutations import CONDITIONS
from toolaudit.probes.judges._records import VerdictRecord, judge_audit
from toolaudit.probes.judges._study import JudgeConfig, judge_records, select_for_judging
from toolaudit.probes.study._records import load_records, reduce_records
from toolaudit.probes.study._run import run_study
from toolaudit.probes.study._runconfig import check_run_config, read_run_config
from toolaudit.progress import Progress
from toolaudit.report import Fallback, record_fallback, run_metadata, write_results
from toolaudit.runs import check_writable
from toolaudit.traces import Episode

logger = logging.getLogger(__name__)

SUITES = (SUITE,)


def run_probe_study(
    out_dir: str | Path,
    *,
    suite: str = SUITE,
    n_seeds: int = 3,
    seed: int = 0,
    n_jobs: int = 1,
    tasks: Sequence[int] | None = None,
    policies: Sequence[str] | None = None,
    conditions: Sequence[str] | None = None,
    progress: Progress | None = None,
    agents: AgentFactories | None = None,
    agent_options: Mapping[str, Mapping[str, Any]] | None = None,
    options: Mapping[str, Any] | None = None,
) -> Path:
    """Run (or resume) a study into ``out_dir/records.jsonl``; returns its path.

    The options that change results (suite, seeds, seed, tasks, policies, conditions, and
    whatever ``options`` adds: the agent's and the judge's model and sampling) are recorded
    in ``out_dir/run_config.json``; resuming with any of them different raises
    :class:`~toolaudit.errors.ConfigError` naming the option, before anything is written.

    Example:
        >>> run_probe_study("out/probe", n_seeds=3, n_jobs=2)  # doctest: +SKIP
    """
    if suite not in SUITES:
        raise ConfigError.invalid("suite", SUITES, suite)
    if n_seeds < 1:
        raise ConfigError.invalid("seeds", "an integer >= 1", n_seeds)
    specs = study_specs(
        tasks=tasks,
        policies=policies,
        conditions=conditions,
        n_seeds=n_seeds,
        base_seed=seed,
        agents=agents,
        agent_options=agent_options,
    )
    config = {
        "suite": suite,
        "n_seeds": n_seeds,
        "seed": seed,
        "tasks": sorted(tasks) if tasks is not None else None,
        "policies": list(dict.fromkeys(s.policy for s in specs)),
        "conditions": list(dict.fromkeys(s.condition for s in specs)),
        **(options or {}),
    }
    check_run_config(out_dir, config)
    _check_model_specs(options or {})  # a bad --model or --judge-model writes nothing
    # run_config.json is written with the first record: a run whose model fails to load
    # leaves the folder as it was
    return run_study(
        out_dir, specs, n_jobs=n_jobs, progress=progress, agents=agents, run_config=config
    )


def _check_model_specs(options: Mapping[str, Any]) -> None:
    """Build (without loading) the agent's and the judge's model from their specs, so a
    malformed spec fails in one line before the study folder is touched."""
    from toolaudit.models import load_model

    for key in ("model", "judge_model"):
        spec = options.get(key)
        if isinstance(spec, str) and spec:
            load_model(spec)


def _scorer_means(episodes: Sequence[Episode]) -> list[dict[str, Any]]:
    """Per (policy, condition, scorer) of an Inspect task with several scorers: the mean
    native and rescored value over the runs that have one (empty for one scorer)."""
    sums: dict[tuple[str, str, str], dict[str, list[float]]] = {}
    for ep in episodes:
        both = ep.source.get("scorers")
        if not isinstance(both, dict):
            continue
        for side in ("native", "rescored"):
            for name, value in (both.get(side) or {}).items():
                key = (str(ep.source.get("policy")), str(ep.condition), str(name))
                if value is not None:
                    sums.setdefault(key, {"native": [], "rescored": []})[side].append(value)
    return [
        {"policy": p, "condition": c, "scorer": n,
         "native": float(np.mean(v["native"])) if v["native"] else None,
         "rescored": float(np.mean(v["rescored"])) if v["rescored"] else None,
         "n_runs": max(len(v["native"]), len(v["rescored"]))}
        for (p, c, n), v in sums.items()
    ]  # fmt: skip


def _judge_part(
    study_dir: Path,
    episodes: Sequence[Episode],
    *,
    harness: str,
    verdicts: Sequence[VerdictRecord] | None,
    judge: JudgeConfig | None,
    seed: int,
    fallbacks: list[Fallback],
    progress: Progress | None,
) -> dict[str, Any]:
    if verdicts is None and judge is not None:
        chosen = select_for_judging(episodes, judge.n_records)
        # the agent's per-process model cache: one copy when agent and judge coincide
        verdicts = judge_records(chosen, judge, out_path=study_dir / "verdicts.jsonl",
                                 load=shared_model, progress=progress)  # fmt: skip
    if not verdicts:
        if harness in REAL_HARNESSES and judge is None and verdicts is None:
            # A harness study has no judge part (`probe judge-audit` is its own command):
            # its absence is no fallback, and no conclusion rests on it.
            return {"skipped": "not part of a harness study (see probe judge-audit)",
                    "simulated": False, "n_verdicts": 0}  # fmt: skip
        reason = (
            "no --judge-model or --verdicts given: the judge audit did not run "
            "(no judge is ever simulated)"
        )
        record_fallback(fallbacks, Fallback(kind="skipped_part", what="probe.judge", detail=reason))
        return {"skipped": reason, "simulated": False, "n_verdicts": 0}
    reference = judge.reference_view if judge is not None else "original"
    out = judge_audit(verdicts, reference_view=reference, seed=seed)
    out["simulated"] = False
    out["source"] = "model" if judge is not None else "verdicts file"
    if judge is not None:
        out["config"] = {
            "model": judge.model,
            "temperature": judge.temperature,
            "n_repeats": judge.n_repeats,
            "views": list(judge.views),
            "prompt": judge.prompt,
            "n_records": judge.n_records,
            "max_tokens": judge.reply_tokens,
        }
    return out


def check_analysis(*, margin: float, seed: int, n_boot: int) -> None:
    """The analysis settings' ranges, checked by ``analyze_study`` and, before a long run
    starts, by ``probe run``: a ConfigError naming the setting (NaN fails)."""
    if not 0.0 < margin <= 1.0:
        raise ConfigError.invalid("margin", "a number in (0, 1]", margin)
    check_min("n_boot", n_boot, 1)
    check_min("seed", seed, 0)


def analyze_study(
    study_dir: str | Path,
    *,
    margin: float = 0.10,
    seed: int = 0,
    n_boot: int = 2000,
    verdicts: Sequence[VerdictRecord] | None = None,
    judge: JudgeConfig | None = None,
    write: bool = True,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """Analyse ``study_dir/records.jsonl`` and write ``study_dir/probe.json``.

    The judge audit runs on ``verdicts`` (verdict records), or asks the real judge of
    ``judge`` (any ``toolaudit.models`` spec) about the study's records; with neither it
    is skipped, and ``probe.json`` says so. No judge is ever simulated.
    """
    check_analysis(margin=margin, seed=seed, n_boot=n_boot)
    study_dir = Path(study_dir)
    episodes = load_records(study_dir)
    if write:
        check_writable(study_dir, "probe.json")  # a read-only folder: refused before any work
    runs = reduce_records(episodes)
    fallbacks: list[Fallback] = []
    harness = str(episodes[0].source.get("harness", SUITE)) if episodes else SUITE
    result = analyze_runs(runs, margin=margin, seed=seed, n_boot=n_boot)
    result["harness"] = harness
    if harness in REAL_HARNESSES:
        from toolaudit.probes.analysis._controls import (
            first_differences,
            mark_informative,
            noop_baseline,
            positive_controls,
        )

        result["selection"] = None
        _harness_fallbacks(read_run_config(study_dir), fallbacks)
        result["noop_baseline"] = noop_baseline(runs, seed=seed, n_boot=n_boot)
        result["positive_controls"] = positive_controls(result["cells"], margin=margin)
        mark_informative(result["cells"], result["positive_controls"])
        first_differences(runs, result["cells"])
        if harness == "tau2":
            from toolaudit.probes.analysis._outcomes import run_outcomes

            result["outcomes"] = run_outcomes(episodes)
        by_scorer = _scorer_means(episodes)
        if by_scorer:  # a task of several scorers: each one by name (the gap uses the first)
            result["scorers"] = by_scorer
    else:
        result["selection"] = selection_experiment(runs)
    result["judge"] = _judge_part(
        study_dir,
        episodes,
        harness=harness,
        verdicts=verdicts,
        judge=judge,
        seed=seed,
        fallbacks=fallbacks,
        progress=progress,
    )
    result["agents"] = (
        agent_summary(episodes)
        if harness not in REAL_HARNESSES
        else harness_agents(episodes, study_dir)
    )
    result["transcripts"] = transcript_pairs(episodes, runs)
    result["records"] = len(episodes)
    result["tasks"] = len({e.task_id for e in episodes})
    result["policies_run"] = list(dict.fromkeys(c["policy"] for c in result["cells"]))
    result["conditions"] = [c for c in CONDITIONS if any(r.condition == c for r in runs)]
    result["findings"] = (
        findings(result) if harness not in REAL_HARNESSES else harness_summary(result)
    )
    result["conclusions"] = [f.model_dump() for f in study_findings(result, margin=margin)]
    meta = run_metadata(
        command="probe analyze",
        seed=seed,
        config={
            **read_run_config(study_dir),
            "margin": margin,
            "n_boot": n_boot,
            "judge_simulated": False,
        },
    )
    meta["fallbacks"] = [f.model_dump() for f in fallbacks]
    result["meta"] = meta
    if write:
        write_results(study_dir / "probe.json", result)
    return result


def _harness_fallbacks(config: dict[str, Any], fallbacks: list[Fallback]) -> None:
    """Departures from the task's own settings in a real-harness study, as recorded
    ``relaxed_parameter`` fallbacks (shown in the report)."""
    departures = {
        "temperature": "the agent and user simulator sample at {v} instead of the task's own "
        "temperature (tau2: 0.0), so that identical reruns can differ",
        "max_turns": "the user simulator stops after {v} turns instead of the task's own limit",
        "time_limit": "a run may take at most {v} s; a run that reached it is scored as it stands",
    }
    if config.get("harness") == "tau2":  # tau2-bench's own defaults: temperature 0, 100 steps
        departures["max_turns"] = (
            "tau2's orchestrator ends a conversation after {v} steps instead of its default 100"
        )
        defaults: dict[str, Any] = {"max_turns": 100, "temperature": 0.0}
    else:
        defaults = {}
    for key, text in departures.items():
        value = config.get(key)
        if value is not None and (key not in defaults or value != defaults[key]):
            record_fallback(fallbacks, Fallback(kind="relaxed_parameter", what=f"probe.{key}",
                                                detail=text.format(v=value)))  # fmt: skip

"""The probe study end to end: run the controlled suite, analyse, write ``probe.json``."""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from toolaudit.errors import ConfigError, DataError, TraceFormatError, check_min
from toolaudit.probes._analysis import analyze_runs, reduce_records
from toolaudit.probes._findings import study_findings
from toolaudit.probes._harness import SUITE, AgentFactories, run_study, study_specs
from toolaudit.probes._judge_audit import VerdictRecord, judge_audit
from toolaudit.probes._judge_protocol import JudgeConfig, judge_records, select_for_judging
from toolaudit.probes._mutations import CONDITIONS
from toolaudit.probes._policies import TOOL_USING
from toolaudit.probes._record_checks import check_study_records
from toolaudit.probes._runconfig import check_run_config, read_run_config
from toolaudit.probes._seam import REAL_HARNESSES
from toolaudit.probes._selection import selection_experiment
from toolaudit.probes._transcripts import transcript_pairs
from toolaudit.progress import Progress
from toolaudit.report import Fallback, record_fallback, run_metadata, write_results
from toolaudit.runs import check_writable
from toolaudit.traces import Episode, iter_json_objects, validate_record

logger = logging.getLogger(__name__)

SUITES = (SUITE,)
_RECORD_KEYS = ("config_hash", "policy", "passed", "true_quality", "seed_label")
_TASK_ID = re.compile(r"ro-\d{2}")


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


def load_records(path: str | Path) -> list[Episode]:
    """Read a study's records (a folder holding ``records.jsonl``, or the file).

    Every record must be a run of ``probe run`` (``source.policy``, ``source.config_hash``,
    ``source.passed`` and a ResearchOps task id), once, of the study its folder's
    ``run_config.json`` describes, with finite scores
    (:func:`~toolaudit.probes._record_checks.check_study_records`); anything else is
    named by file, line and field.
    """
    path = Path(path)
    if path.is_dir():
        path = path / "records.jsonl"
    if not path.exists():
        raise DataError(f"{path}: no probe records (run 'toolaudit probe run' first)")
    numbered = [
        (lineno, validate_record(Episode, obj, path, lineno))
        for lineno, obj in iter_json_objects(path)
    ]
    episodes = [ep for _, ep in numbered]
    harnesses = {str(ep.source.get("harness", SUITE)) for ep in episodes}
    if len(harnesses) > 1:
        raise DataError(f"{path}: records of several harnesses ({sorted(harnesses)}) in one study")
    for lineno, ep in numbered:
        if ep.source.get("harness") in REAL_HARNESSES:
            for key in ("config_hash", "policy", "passed", "seed_label", "rescored_reward"):
                if key not in ep.source:
                    raise TraceFormatError(path, lineno, f"source.{key}",
                                           f"not a 'probe run --harness {ep.source['harness']}' record")  # fmt: skip
            continue
        for key in _RECORD_KEYS:
            if key not in ep.source:
                raise TraceFormatError(
                    path,
                    lineno,
                    f"source.{key}",
                    "not a 'probe run' record (to compare imported result files use "
                    "'toolaudit probe compare A B')",
                )
        if not _TASK_ID.fullmatch(ep.task_id):
            raise TraceFormatError(
                path, lineno, "task_id", f"{ep.task_id!r} is no ResearchOps task"
            )
    check_study_records(path, numbered, read_run_config(path.parent))
    return episodes


def _cell(cells: list[dict[str, Any]], policy: str, condition: str) -> dict[str, Any] | None:
    return next((c for c in cells if c["policy"] == policy and c["condition"] == condition), None)


def findings(result: dict[str, Any]) -> dict[str, Any]:
    """The seed's headline checks, read off the analysed cells (null when not run)."""
    cells = result["cells"]
    out: dict[str, Any] = {}
    careful = _cell(cells, "careful", "tool_rename")
    if careful:
        out["careful_tool_rename_vrg"] = careful["vrg"]
        out["careful_tool_rename_vrg_rescored"] = careful["vrg_rescored"]
        out["careful_tool_rename_behavior_changed_rate"] = careful["behavior_changed_rate"]
    overfit = _cell(cells, "overfit", "tool_rename")
    if overfit:
        out["overfit_tool_rename_vrg"] = overfit["vrg"]
        out["overfit_tool_rename_vrg_rescored"] = overfit["vrg_rescored"]
        out["overfit_tool_rename_behavior_changed_rate"] = overfit["behavior_changed_rate"]
    summary = {r["policy"]: r for r in result["policies"]}
    if "shortcut" in summary:
        s = summary["shortcut"]
        out["shortcut_mean_msr"] = s["mean_msr"]
        out["shortcut_mean_abs_vrg"] = s["mean_abs_vrg"]
        out["shortcut_gap_only_rank"] = s["gap_only_rank"]
        out["shortcut_msr_rank"] = s["msr_rank"]
        out["shortcut_misranked_by_gap"] = s["misranked_by_gap"]
    exploit = _cell(cells, "proxy_exploit", "original")
    if exploit:
        out["proxy_exploit_ptd_original"] = exploit["ptd"]
    lowered = {}
    for p in TOOL_USING:
        c = _cell(cells, p, "misleading_names")
        if c:
            lowered[p] = c["vrg"]
    out["misleading_names_vrg"] = lowered
    out["misleading_names_lowers_every_tool_user"] = bool(lowered) and all(
        v > 0 for v in lowered.values()
    )
    return out


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
        verdicts = judge_records(
            chosen, judge, out_path=study_dir / "verdicts.jsonl", progress=progress
        )
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
    out = judge_audit(verdicts, reference_view="full" if judge else "original", seed=seed)
    out["simulated"] = False
    out["source"] = "model" if judge is not None else "verdicts file"
    if judge is not None:
        out["config"] = {
            "model": judge.model,
            "temperature": judge.temperature,
            "n_repeats": judge.n_repeats,
            "views": list(judge.views),
            "n_records": judge.n_records,
            "max_tokens": judge.max_tokens,
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
        from toolaudit.probes._controls import (
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
            from toolaudit.probes._outcomes import run_outcomes

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


def harness_summary(result: dict[str, Any]) -> dict[str, Any]:
    """Per policy and mutated condition of a real-harness study: the gap, the rescored gap
    (by the task's own scorer) and the behaviour change; and the controls."""
    cells = {
        f"{c['policy']}.{c['condition']}": {
            "vrg": c["vrg"],
            "vrg_rescored": c["vrg_rescored"],
            "behavior_changed_rate": c["behavior_changed_rate"],
        }
        for c in result["cells"]
        if c["condition"] != "original"
    }
    return {
        "cells": cells,
        "noop_pass_rate": result["noop_baseline"].get("pass_rate"),
        "positive_control": {r["policy"]: r["verdict"] for r in result["positive_controls"]},
    }


def harness_agents(episodes: Sequence[Episode], study_dir: Path) -> list[dict[str, Any]]:
    """Per policy of a real-harness study: runs, the agent's tool calls and tool calls that
    failed to parse, tokens per conversation (the model's own tokenizer, by role), and
    seconds per conversation from ``timings.jsonl`` (kept out of the records so that a
    rerun's records are byte-identical)."""
    import json

    seconds: dict[str, float] = {}
    timings = study_dir / "timings.jsonl"
    if timings.is_file():
        for line in timings.read_text(encoding="utf-8").splitlines():
            try:
                row = json.loads(line)
                seconds[str(row["config_hash"])] = float(row["seconds"])
            except (json.JSONDecodeError, KeyError, TypeError, ValueError):
                continue  # a torn line of an interrupted run: timing only
    rows: dict[str, dict[str, Any]] = {}
    for ep in episodes:
        info = ep.source.get("agent_info") or {}
        policy = str(ep.source["policy"])
        row = rows.setdefault(policy, {"policy": policy, "model": info.get("model"), "runs": 0,
                                       "tool_calls": 0, "parse_errors": 0,
                                       "runs_without_tool_call": 0, "tokens": {}, "seconds": []})  # fmt: skip
        row["runs"] += 1
        row["tool_calls"] += int(info.get("tool_calls", 0))
        row["parse_errors"] += int(info.get("parse_errors", 0))
        row["runs_without_tool_call"] += int(info.get("tool_calls", 0)) == 0
        by_role = dict(info.get("usage_by_role") or {})
        models = info.get("usage_by_model") or {}
        if models:  # every model of the run (agent and user simulator), summed
            by_role["all"] = {
                k: sum(int(u.get(k) or 0) for u in models.values())
                for k in ("input_tokens", "output_tokens")
            }
        for role, usage in by_role.items():
            tok = row["tokens"].setdefault(role, {"input_tokens": 0, "output_tokens": 0})
            tok["input_tokens"] += int(usage.get("input_tokens") or 0)
            tok["output_tokens"] += int(usage.get("output_tokens") or 0)
        t = seconds.get(str(ep.source["config_hash"]))
        if t is not None:
            row["seconds"].append(t)
    for row in rows.values():
        n = row["runs"]
        row["tokens_per_run"] = {
            role: {k: v / n for k, v in tok.items()} for role, tok in row["tokens"].items()
        }
        secs = row.pop("seconds")
        row["seconds_per_run"] = sum(secs) / len(secs) if secs else None
        row["timed_runs"] = len(secs)
    return list(rows.values())


def agent_summary(episodes: Sequence[Episode]) -> list[dict[str, Any]]:
    """Per model-driven policy: model, sampling, generations and tool calls that failed to
    parse (counted and kept in each record's ``source.agent_info``, never dropped)."""
    rows: dict[str, dict[str, Any]] = {}
    for ep in episodes:
        info = ep.source.get("agent_info")
        if not isinstance(info, dict) or ep.source.get("harness") in REAL_HARNESSES:
            continue
        policy = str(ep.source["policy"])
        row = rows.setdefault(
            policy,
            {
                "policy": policy,
                "model": info.get("model"),
                "temperature": info.get("temperature"),
                "runs": 0,
                "generations": 0,
                "tool_calls": 0,
                "parse_errors": 0,
                "runs_with_parse_errors": 0,
                "runs_without_submit": 0,
                "hit_step_limit": 0,
            },
        )
        n_err = len(info.get("parse_errors", []))
        row["runs"] += 1
        row["generations"] += int(info.get("generations", 0))
        row["tool_calls"] += len(ep.tool_calls())
        row["parse_errors"] += n_err
        row["runs_with_parse_errors"] += n_err > 0
        row["runs_without_submit"] += not info.get("submitted", False)
        row["hit_step_limit"] += bool(info.get("hit_step_limit", False))
    for row in rows.values():
        row["parse_error_rate"] = (
            row["parse_errors"] / row["generations"] if row["generations"] else None
        )
    return list(rows.values())

"""The probe study end to end: run the controlled suite, analyse, write ``probe.json``."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from toolaudit.errors import ConfigError, DataError
from toolaudit.probes._analysis import analyze_runs, reduce_records
from toolaudit.probes._harness import SUITE, AgentFactories, Progress, run_study, study_specs
from toolaudit.probes._judge import VerdictRecord, judge_audit, simulate_verdicts
from toolaudit.probes._mutations import CONDITIONS
from toolaudit.probes._policies import TOOL_USING
from toolaudit.probes._selection import selection_experiment
from toolaudit.report import run_metadata, write_results
from toolaudit.traces import Episode, read_jsonl

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
) -> Path:
    """Run (or resume) a study into ``out_dir/records.jsonl``; returns its path.

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
    )
    return run_study(out_dir, specs, n_jobs=n_jobs, progress=progress, agents=agents)


def load_records(path: str | Path) -> list[Episode]:
    """Read a study's records (a folder holding ``records.jsonl``, or the file)."""
    path = Path(path)
    if path.is_dir():
        path = path / "records.jsonl"
    if not path.exists():
        raise DataError(f"{path}: no probe records (run 'toolaudit probe run' first)")
    return list(read_jsonl(path, Episode))


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


def analyze_study(
    study_dir: str | Path,
    *,
    margin: float = 0.10,
    seed: int = 0,
    n_boot: int = 2000,
    verdicts: Sequence[VerdictRecord] | None = None,
    write: bool = True,
) -> dict[str, Any]:
    """Analyse ``study_dir/records.jsonl`` and write ``study_dir/probe.json``.

    ``verdicts`` are judge verdict records; when omitted, seeded simulated judges over
    the study's records are audited (labelled ``simulated`` in the output).
    """
    episodes = load_records(study_dir)
    runs = reduce_records(episodes)
    result = analyze_runs(runs, margin=margin, seed=seed, n_boot=n_boot)
    result["selection"] = selection_experiment(runs)
    simulated = verdicts is None
    judge_input = simulate_verdicts(runs, seed=seed) if verdicts is None else list(verdicts)
    result["judge"] = judge_audit(judge_input, seed=seed) if judge_input else None
    if result["judge"] is not None:
        result["judge"]["simulated"] = simulated
    result["findings"] = findings(result)
    result["records"] = len(episodes)
    result["tasks"] = len({e.task_id for e in episodes})
    result["policies_run"] = list(dict.fromkeys(c["policy"] for c in result["cells"]))
    result["conditions"] = [c for c in CONDITIONS if any(r.condition == c for r in runs)]
    result["meta"] = run_metadata(
        command="probe analyze",
        seed=seed,
        config={"suite": SUITE, "margin": margin, "n_boot": n_boot, "judge_simulated": simulated},
    )
    if write:
        write_results(Path(study_dir) / "probe.json", result)
    return result

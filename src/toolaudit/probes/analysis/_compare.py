"""Paired statistics on imported results: rerun flips and two-file comparisons.

* Trials of one task are identical reruns: the flip rate (pairs of trials whose pass
  outcome differs) with a task-cluster bootstrap interval; undefined (null) when no task
  has two scored trials.
* Two result files over the same tasks are a paired comparison: the paired difference
  Δ = mean over tasks of (B − A) mean reward with 95% and 90% task-cluster intervals and
  the equivalence verdict on the 90% interval; the same on per-task pass rates
  (``task_level``), which is the comparison to read when a file has several trials per
  task; exact McNemar only when both files have exactly one trial on every paired task
  (otherwise trial indices are arbitrary labels and pairing them means nothing); and
  tau2-bench's pass^k of each side.
* Rewards that are not finite numbers (NaN, ±inf) are bad input, named by file, record
  and field. Files from different domains (airline vs retail) are paired only by task
  id, which is meaningless: the comparison carries a warning.

Bad input is counted and reported, never silently dropped or imputed: runs without a
reward, runs that ended prematurely (``agent_error``, ``too_many_errors``, ...; kept as
scored by default, as the benchmark scores them), tasks present on one side only, and
tasks with fewer trials than the file's most common trial count.
"""

from __future__ import annotations

import logging
import math
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from itertools import combinations
from pathlib import Path
from typing import Any

import numpy as np

from toolaudit.errors import ConfigError, DataError, TraceFormatError, check_min
from toolaudit.probes.analysis._stats import pass_hat_k, task_level_comparison, tau2_success
from toolaudit.stats import cluster_mean_bootstrap, equivalence_verdict, mcnemar_exact
from toolaudit.traces import Episode, load_episodes, view_command

logger = logging.getLogger(__name__)

NORMAL_ENDINGS = {None, "user_stop", "agent_stop", "submitted"}


@dataclass(slots=True)
class ResultSide:
    """One results file reduced to rewards per task and trial, with its bad-input counts."""

    path: str
    rewards: dict[str, dict[int, float]] = field(default_factory=lambda: defaultdict(dict))
    endings: dict[str, dict[int, str | None]] = field(default_factory=lambda: defaultdict(dict))
    n_runs: int = 0
    unrewarded: list[str] = field(default_factory=list)
    premature: list[str] = field(default_factory=list)
    excluded_premature: int = 0
    duplicate_runs: int = 0
    domains: set[str] = field(default_factory=set)
    user_models: set[str] = field(default_factory=set)
    inspect_tasks: set[str] = field(default_factory=set)
    views: set[str] = field(default_factory=set)

    def tasks_missing_trials(self) -> dict[str, int]:
        """Task -> number of scored trials, for tasks below the modal trial count."""
        counts = {t: len(v) for t, v in self.rewards.items()}
        if not counts:
            return {}
        modal = Counter(counts.values()).most_common(1)[0][0]
        return {t: n for t, n in sorted(counts.items()) if n < modal}

    def summary(self) -> dict[str, Any]:
        """Counts for the results JSON."""
        trials = Counter(len(v) for v in self.rewards.values())
        return {
            "path": self.path,
            "runs": self.n_runs,
            "tasks": len(self.rewards),
            "scored_runs": sum(len(v) for v in self.rewards.values()),
            "trials_per_task": {str(k): v for k, v in sorted(trials.items())},
            "unrewarded_runs": len(self.unrewarded),
            "unrewarded": self.unrewarded,
            "premature_runs": len(self.premature),
            "premature": self.premature,
            "excluded_premature": self.excluded_premature,
            "duplicate_runs": self.duplicate_runs,
            "tasks_missing_trials": self.tasks_missing_trials(),
            "domains": sorted(self.domains),
            "user_models": sorted(self.user_models),
            "inspect_tasks": sorted(self.inspect_tasks),
            "view": sorted(self.views),
            "pass_hat_k": pass_hat_k(
                {t: [tau2_success(r) for r in v.values()] for t, v in self.rewards.items()}
            ),
        }


def _record_field(ep: Episode, number: int) -> tuple[int | None, str]:
    """(line, field) naming a record's reward: tau2 files by simulation index."""
    if ep.source.get("format") == "tau2" and isinstance(ep.source.get("index"), int):
        return None, f"simulations[{ep.source['index']}].reward_info.reward"
    return number, "reward"


def read_side(
    path: str | Path,
    *,
    episodes: Iterable[Episode] | None = None,
    exclude_premature: bool = False,
) -> ResultSide:
    """Load a results file (any format ``toolaudit.traces`` reads) into a ResultSide.

    Raises :class:`~toolaudit.errors.TraceFormatError` naming the record and field when
    a reward is not a finite number.
    """
    side = ResultSide(str(path))
    for number, ep in enumerate(episodes if episodes is not None else load_episodes(path), start=1):
        side.n_runs += 1
        if ep.reward is not None and not math.isfinite(ep.reward):
            line, fld = _record_field(ep, number)
            raise TraceFormatError(
                path,
                line,
                fld,
                f"reward is {ep.reward} (task {ep.task_id}, trial {ep.trial}); "
                "a reward must be a finite number",
            )
        domain = ep.source.get("domain")
        if domain:
            side.domains.add(str(domain))
        if ep.source.get("user_model"):
            side.user_models.add(str(ep.source["user_model"]))
        if ep.source.get("format") == "inspect" and ep.source.get("task"):
            side.inspect_tasks.add(str(ep.source["task"]))
        if (view := view_command(ep.source)) is not None:
            side.views.add(view)
        label = f"{ep.task_id}#{ep.trial}"
        premature = ep.termination_reason not in NORMAL_ENDINGS
        if premature:
            side.premature.append(f"{label}:{ep.termination_reason}")
        if ep.reward is None:
            side.unrewarded.append(label)
            continue
        if premature and exclude_premature:
            side.excluded_premature += 1
            continue
        if ep.trial in side.rewards[ep.task_id]:
            side.duplicate_runs += 1
            continue
        side.rewards[ep.task_id][ep.trial] = float(ep.reward)
        side.endings[ep.task_id][ep.trial] = ep.termination_reason
    return side


def check_pass_threshold(name: str, value: float) -> None:
    """The reward counted as a pass must lie in (0, 1] (NaN fails): a ConfigError naming
    the setting otherwise.

    >>> check_pass_threshold("threshold", 0.0)
    Traceback (most recent call last):
    toolaudit.errors.ConfigError: invalid threshold=0.0; allowed: a number in (0, 1]
    """
    if not 0.0 < value <= 1.0:
        raise ConfigError.invalid(name, "a number in (0, 1]", value)


def rerun_flips(
    side: ResultSide, *, threshold: float = 0.5, seed: int = 0, n_boot: int = 2000
) -> dict[str, Any]:
    """Flip rate between identical reruns (trials of one task)."""
    check_pass_threshold("threshold", threshold)
    check_min("seed", seed, 0)
    clusters, flips = [], []
    for task, trials in sorted(side.rewards.items()):
        passes = [trials[k] >= threshold for k in sorted(trials)]
        for a, b in combinations(passes, 2):
            clusters.append(task)
            flips.append(float(a != b))
    if not flips:
        return {
            "flip_rate": None,
            "ci95": None,
            "n_pairs": 0,
            "n_tasks": 0,
            "note": "no task has two scored trials; rerun variation is not measurable",
        }
    arr = np.array(flips)
    n_tasks = len(set(clusters))
    if n_tasks < 2:  # one cluster: no task-level variation to resample
        return {
            "flip_rate": None,
            "ci95": None,
            "n_pairs": len(flips),
            "n_tasks": n_tasks,
            "note": f"not estimable: {len(flips)} trial pair(s) on one task ({int(arr.sum())} "
            "flipped); the task-cluster interval needs at least 2 tasks",
        }
    iv = cluster_mean_bootstrap(clusters, arr, n_boot=n_boot, seed=seed)
    return {
        "flip_rate": float(arr.mean()),
        "ci95": [iv.low, iv.high],
        "n_pairs": len(flips),
        "n_tasks": len(set(clusters)),
    }


def compare_sides(
    a: ResultSide,
    b: ResultSide,
    *,
    margin: float = 0.10,
    threshold: float = 0.5,
    seed: int = 0,
    n_boot: int = 2000,
) -> dict[str, Any]:
    """McNemar, paired difference with intervals and the equivalence verdict."""
    check_pass_threshold("threshold", threshold)
    common = sorted(set(a.rewards) & set(b.rewards), key=_natural)
    only_a = sorted(set(a.rewards) - set(b.rewards), key=_natural)
    only_b = sorted(set(b.rewards) - set(a.rewards), key=_natural)
    if not common:
        raise DataError(f"{a.path} and {b.path} share no scored task; nothing to pair")
    diffs = np.array(
        [
            np.mean(list(b.rewards[t].values())) - np.mean(list(a.rewards[t].values()))
            for t in common
        ]
    )
    single = all(len(a.rewards[t]) == 1 and len(b.rewards[t]) == 1 for t in common)
    bb = cc = 0
    for t in common if single else ():
        pa = next(iter(a.rewards[t].values())) >= threshold
        pb = next(iter(b.rewards[t].values())) >= threshold
        bb += pa and not pb
        cc += pb and not pa
    unpaired_trials = sum(len(set(a.rewards[t]) ^ set(b.rewards[t])) for t in common)
    warnings = []
    if a.domains and b.domains and a.domains != b.domains:
        warnings.append(
            f"A is {'/'.join(sorted(a.domains))} and B is {'/'.join(sorted(b.domains))}: "
            "tasks are paired by id across different domains, so the pairs are not the same task"
        )
    warnings += _side_differences(a, b, only_a, only_b, len(common))
    for w in warnings:
        logger.warning("%s", w)
    mcnemar: dict[str, Any] = (
        {
            "applicable": True,
            "a_pass_b_fail": int(bb),
            "a_fail_b_pass": int(cc),
            "p": mcnemar_exact(bb, cc),
        }
        if single
        else {
            "applicable": False,
            "a_pass_b_fail": None,
            "a_fail_b_pass": None,
            "p": None,
            "note": "several trials per task: trial indices are arbitrary labels, so runs "
            "are not paired; read task_level (per-task pass rates) instead",
        }
    )
    ci95 = cluster_mean_bootstrap(common, diffs, n_boot=n_boot, level=0.95, seed=seed)
    ci90 = cluster_mean_bootstrap(common, diffs, n_boot=n_boot, level=0.90, seed=seed)
    eq = equivalence_verdict(ci90, margin=margin)
    mean_a = float(np.mean([np.mean(list(a.rewards[t].values())) for t in common]))
    mean_b = float(np.mean([np.mean(list(b.rewards[t].values())) for t in common]))
    return {
        "a": a.summary(),
        "b": b.summary(),
        "paired_tasks": len(common),
        "only_in_a": only_a,
        "only_in_b": only_b,
        "unpaired_trials": unpaired_trials,
        "mean_reward_a": mean_a,
        "mean_reward_b": mean_b,
        "delta": float(diffs.mean()),
        "delta_ci95": [ci95.low, ci95.high],
        "delta_ci90": [ci90.low, ci90.high],
        "equivalence": eq.verdict,
        "change_detected": eq.excludes_zero,
        "larger_than_margin": eq.outside_margin,
        "margin": margin,
        "threshold": threshold,
        "mcnemar": mcnemar,
        "task_level": task_level_comparison(
            {t: list(a.rewards[t].values()) for t in common},
            {t: list(b.rewards[t].values()) for t in common},
            common,
            threshold=threshold,
            margin=margin,
            seed=seed,
            n_boot=n_boot,
        ),
        "warnings": warnings,
        "tasks_changed": int((diffs != 0).sum()),
        "changed_tasks": [t for t, d in zip(common, diffs, strict=True) if d != 0],
        "changed": [_changed(t, a, b) for t, d in zip(common, diffs, strict=True) if d != 0],
        # pass^k on the paired tasks only, so it reads beside the paired means above
        "paired_pass_hat_k": {
            side: pass_hat_k({t: [tau2_success(r) for r in s.rewards[t].values()] for t in common})
            for side, s in (("a", a), ("b", b))
        },
        "rerun_flips_a": rerun_flips(a, threshold=threshold, seed=seed, n_boot=n_boot),
        "rerun_flips_b": rerun_flips(b, threshold=threshold, seed=seed, n_boot=n_boot),
    }


def _changed(task: str, a: ResultSide, b: ResultSide) -> dict[str, Any]:
    """One changed task: each side's mean reward and how its runs ended."""
    return {
        "task": task,
        "reward_a": float(np.mean(list(a.rewards[task].values()))),
        "reward_b": float(np.mean(list(b.rewards[task].values()))),
        "endings_a": [a.endings[task].get(k) for k in sorted(a.rewards[task])],
        "endings_b": [b.endings[task].get(k) for k in sorted(b.rewards[task])],
    }


def compare_files(
    path_a: str | Path,
    path_b: str | Path,
    *,
    margin: float = 0.10,
    threshold: float = 0.5,
    exclude_premature: bool = False,
    seed: int = 0,
    n_boot: int = 2000,
) -> dict[str, Any]:
    """Paired comparison of two result files over the same tasks (B − A)."""
    a = read_side(path_a, exclude_premature=exclude_premature)
    b = read_side(path_b, exclude_premature=exclude_premature)
    return compare_sides(a, b, margin=margin, threshold=threshold, seed=seed, n_boot=n_boot)


def _ids(ids: list[str], n: int = 5) -> str:
    return ", ".join(ids[:n]) + (f" and {len(ids) - n} more" if len(ids) > n else "")


def _side_differences(
    a: ResultSide, b: ResultSide, only_a: list[str], only_b: list[str], n_common: int
) -> list[str]:
    """Warnings for two sides that differ in what they ran: their task sets, the Inspect
    task, or the user simulator (the domain is checked by the caller)."""
    out = []
    if only_a or only_b:
        out.append(
            f"A and B differ in task set: {len(only_a)} task(s) only in A"
            + (f" ({_ids(only_a)})" if only_a else "")
            + f", {len(only_b)} only in B"
            + (f" ({_ids(only_b)})" if only_b else "")
            + f"; only the {n_common} tasks both ran are compared"
        )
    if a.inspect_tasks and b.inspect_tasks and a.inspect_tasks != b.inspect_tasks:
        out.append(
            f"A and B come from different Inspect tasks ({'/'.join(sorted(a.inspect_tasks))} "
            f"vs {'/'.join(sorted(b.inspect_tasks))}): samples are paired by id across tasks"
        )
    if a.user_models and b.user_models and a.user_models != b.user_models:
        out.append(
            f"the user simulator differs: A uses {'/'.join(sorted(a.user_models))}, B uses "
            f"{'/'.join(sorted(b.user_models))}, so a change may come from the simulated user "
            "rather than the agent"
        )
    return out


def _natural(task: str) -> tuple[int, str]:
    return (int(task), "") if task.isdigit() else (1 << 30, task)

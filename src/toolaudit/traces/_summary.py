"""Summaries of a trace file: how many runs, tasks, tool calls and results, mean reward.

``inspect_path`` streams the records, so it works on files of any size. The stable keys
of ``TraceSummary.as_dict()`` are ``format, episodes, tasks, tool_calls, tool_results,
mean_reward``; the others are additions.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolaudit.traces._domain import load_domain
from toolaudit.traces._formats import load_episodes, load_examples, resolve_format
from toolaudit.traces._mapping import FieldMapping
from toolaudit.traces._schema import Episode, Example

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class TraceSummary:
    """Counts for one trace file or domain folder.

    For Example files, ``episodes`` counts records, ``tasks`` distinct groups,
    ``tool_calls`` and ``tool_results`` tool sections, and ``mean_reward`` the mean label.
    For a domain folder, ``tasks`` counts tasks and ``tool_calls`` reference actions.
    """

    format: str
    path: str
    episodes: int
    tasks: int
    tool_calls: int
    tool_results: int
    mean_reward: float | None
    rewarded: int = 0
    tool_errors: int = 0
    termination: dict[str, int] = field(default_factory=dict)
    tools: dict[str, int] = field(default_factory=dict)
    records: str = "episodes"

    def as_dict(self) -> dict[str, Any]:
        """The JSON form printed by ``toolaudit traces inspect --json``."""
        return {
            "format": self.format,
            "path": self.path,
            "episodes": self.episodes,
            "tasks": self.tasks,
            "tool_calls": self.tool_calls,
            "tool_results": self.tool_results,
            "mean_reward": self.mean_reward,
            "rewarded": self.rewarded,
            "tool_errors": self.tool_errors,
            "termination": dict(self.termination),
            "tools": dict(self.tools),
            "records": self.records,
        }


def inspect_path(
    path: str | Path, *, format: str = "auto", mapping: FieldMapping | None = None
) -> TraceSummary:
    """Summarize any supported file or domain folder.

    Example:
        >>> s = inspect_path("../shared/data/tau-bench/retail__tool-calling__openai-model-masked__100x1.json")  # doctest: +SKIP
        >>> (s.episodes, s.tool_calls, s.mean_reward)  # doctest: +SKIP
        (100, 793, 0.73)
    """
    path = Path(path)
    fmt = resolve_format(path, format, mapping=mapping)
    if fmt == "tau2-domain":
        domain = load_domain(path)
        calls = Counter(a.name for t in domain.tasks for a in t.reference_actions)
        return TraceSummary(
            format=fmt,
            path=str(path),
            episodes=0,
            tasks=len(domain.tasks),
            tool_calls=domain.n_reference_actions(),
            tool_results=0,
            mean_reward=None,
            tools=dict(sorted(calls.items())),
            records="domain",
        )
    if fmt == "examples" or (
        fmt == "mapped" and mapping is not None and mapping.kind == "examples"
    ):
        return summarize_examples(load_examples(path, format=fmt, mapping=mapping), fmt, path)
    return summarize_episodes(load_episodes(path, format=fmt, mapping=mapping), fmt, path)


def summarize_episodes(episodes: Iterable[Episode], fmt: str, path: str | Path) -> TraceSummary:
    """Count episodes, distinct tasks, tool calls and results, errors and mean reward."""
    n = calls = results = errors = 0
    rewards: list[float] = []
    tasks: set[str] = set()
    termination: Counter[str] = Counter()
    tools: Counter[str] = Counter()
    for ep in episodes:
        n += 1
        tasks.add(ep.task_id)
        for call in ep.tool_calls():
            calls += 1
            tools[call.name] += 1
        for res in ep.tool_results():
            results += 1
            errors += res.error
        if ep.reward is not None:
            rewards.append(ep.reward)
        if ep.termination_reason:
            termination[ep.termination_reason] += 1
    return TraceSummary(
        format=fmt,
        path=str(path),
        episodes=n,
        tasks=len(tasks),
        tool_calls=calls,
        tool_results=results,
        mean_reward=sum(rewards) / len(rewards) if rewards else None,
        rewarded=len(rewards),
        tool_errors=errors,
        termination=dict(sorted(termination.items())),
        tools=dict(sorted(tools.items())),
    )


def summarize_examples(examples: Iterable[Example], fmt: str, path: str | Path) -> TraceSummary:
    """Count records, distinct groups, tool sections and the sections flagged as errors
    (``meta.tool_errors``, as ``traces convert`` writes it); the mean label is the mean
    reward."""
    n = sections = positives = errors = 0
    groups: set[str] = set()
    tools: Counter[str] = Counter()
    for ex in examples:
        n += 1
        positives += ex.label
        groups.add(ex.group)
        sections += len(ex.tools)
        tools.update(t.name for t in ex.tools)
        # the flags `traces convert` keeps, one per section (meta.tool_errors)
        flags = ex.meta.get("tool_errors")
        if isinstance(flags, list):
            errors += sum(1 for f in flags if f is True)
    return TraceSummary(
        format=fmt,
        path=str(path),
        episodes=n,
        tasks=len(groups),
        tool_calls=sections,
        tool_results=sections,
        mean_reward=positives / n if n else None,
        rewarded=n,
        tool_errors=errors,
        tools=dict(sorted(tools.items())),
        records="examples",
    )


def summary_rows(summary: TraceSummary) -> list[list[Any]]:
    """Rows ``[quantity, value]`` for a human-readable table."""
    rows: list[list[Any]] = [
        ["format", summary.format],
        [
            "episodes" if summary.records != "examples" else "records",
            summary.episodes,
        ],
        ["tasks" if summary.records != "examples" else "groups", summary.tasks],
        ["tool calls", summary.tool_calls],
        ["tool results", summary.tool_results],
        ["tool results flagged as errors", summary.tool_errors],
        ["episodes with a reward", summary.rewarded],
        ["mean reward", summary.mean_reward],
    ]
    if summary.termination:
        rows.append(["termination", ", ".join(f"{k}: {v}" for k, v in summary.termination.items())])
    return rows

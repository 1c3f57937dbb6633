"""The trace summary as an :class:`~toolaudit.audits.Audit`: inspect every public trace
file under a data root and write ``traces.json`` (one summary per file)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from toolaudit.audits import AuditResult, ProgressFn, ResultRecord, result_meta
from toolaudit.errors import check_min
from toolaudit.report import Fallback, Finding, Section, record_fallback
from toolaudit.traces._summary import inspect_path

_HEADER = ["file", "format", "episodes", "tasks", "tool calls", "tool results", "tool errors",
           "mean reward"]  # fmt: skip


def public_trace_paths(data_root: Path) -> list[Path]:
    """The public files the demo inspects, in a fixed order: tau2 simulations,
    tau-bench trajectory lists, then tau2 domain folders."""
    paths = sorted((data_root / "tau2" / "simulations").glob("*.json"))
    paths += sorted((data_root / "tau-bench").glob("*.json"))
    domains = data_root / "tau2" / "domains"
    if domains.is_dir():
        paths += sorted(p for p in domains.iterdir() if (p / "tasks.json").is_file())
    return paths


@dataclass(frozen=True, slots=True)
class TracesConfig:
    """Which files to inspect: every public file under ``data_root`` (tau2 simulations,
    tau-bench trajectory lists, tau2 domain folders)."""

    data_root: Path | None = None
    seed: int = 0

    def __post_init__(self) -> None:
        check_min("seed", self.seed, 0)


class TraceFileSummary(ResultRecord):
    """One file's counts (the stable keys of ``traces inspect --json`` plus extras)."""

    format: str
    path: str
    episodes: int
    tasks: int
    tool_calls: int
    tool_results: int
    mean_reward: float | None
    rewarded: int = 0
    tool_errors: int = 0
    termination: dict[str, int] = {}
    tools: dict[str, int] = {}


class TracesResult(AuditResult):
    """``traces.json``: one summary per public file (paths relative to the data root)."""

    results_file: ClassVar[str] = "traces.json"

    files: list[TraceFileSummary]


class TracesAudit:
    """The trace summary of the public tau2-bench / tau-bench files."""

    name = "traces"
    title = "Real agent trajectories (tau2-bench, tau-bench)"
    result_model = TracesResult

    def demo_config(self, *, seed: int, data_root: Path | None) -> TracesConfig:
        """Every public file under the demo's data root."""
        return TracesConfig(data_root=data_root, seed=seed)

    def run(
        self, config: TracesConfig, *, out_dir: Path, progress: ProgressFn | None = None
    ) -> TracesResult:
        """Inspect the files; a missing data root is a recorded ``skipped_part``."""
        root = config.data_root if config.data_root and config.data_root.is_dir() else None
        paths = public_trace_paths(root) if root is not None else []
        fallbacks: list[Fallback] = []
        if not paths:
            record_fallback(
                fallbacks,
                Fallback(
                    kind="skipped_part",
                    what="traces.public_files",
                    detail=f"no public tau2-bench / tau-bench files under the data root "
                    f"({config.data_root}); pass --data-root or set TAU2_DATA_DIR",
                ),
            )
        files = []
        for i, path in enumerate(paths):
            if progress is not None:
                progress(i, len(paths), path.name)
            assert root is not None
            summary = inspect_path(path).as_dict()
            summary["path"] = str(path.relative_to(root))
            files.append(TraceFileSummary.model_validate(summary))
        if progress is not None:
            progress(len(paths), len(paths), "done")
        meta = result_meta(
            command="toolaudit traces inspect",
            seed=config.seed,
            config={"files": [f.path for f in files]},
            fallbacks=fallbacks,
        )
        return TracesResult.new(meta, files=files)

    def headline(self, result: TracesResult) -> Finding | None:
        """The counts read: files, episodes and tool calls (None when no file was read)."""
        if not result.files:
            return None
        episodes = sum(f.episodes for f in result.files)
        calls = sum(f.tool_calls for f in result.files)
        return Finding(
            name="traces.counts",
            verdict=f"{len(result.files)} files read",
            subject=f"{episodes} episodes, {calls} tool calls",
            details={"tool_calls": calls},
        )

    def sections(self, result: TracesResult) -> list[Section]:
        """One table with every file's counts."""
        section = Section(self.title)
        if not result.files:
            section.text(f"{len(result.files)} public trace files inspected.")
            return [section]
        section.text(
            f"{len(result.files)} public trajectory files under the data root, read by the "
            "format-detecting loaders. For a domain folder, tasks are its tasks and tool "
            "calls its reference actions. Runs that ended early (agent_error, "
            "too_many_errors) keep tau2's reward of 0 but carry no reward components."
        )
        rows = [
            [f.path, f.format, f.episodes, f.tasks, f.tool_calls, f.tool_results, f.tool_errors,
             f.mean_reward]
            for f in result.files
        ]  # fmt: skip
        section.table("Public trace files", _HEADER, rows)
        return [section]


TRACES_AUDIT = TracesAudit()

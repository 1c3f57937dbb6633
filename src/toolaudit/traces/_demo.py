"""The traces part of ``toolaudit demo``: inspect every public trace file under the data
root and report one table (results in ``traces.json``)."""

from __future__ import annotations

import logging
from pathlib import Path

from toolaudit.progress import Progress
from toolaudit.report import Section, run_metadata, write_results
from toolaudit.traces._summary import TraceSummary, inspect_path

logger = logging.getLogger(__name__)

RESULTS_FILE = "traces.json"
_HEADER = [
    "file",
    "format",
    "episodes",
    "tasks",
    "tool calls",
    "tool results",
    "tool errors",
    "mean reward",
]


def public_trace_paths(data_root: Path) -> list[Path]:
    """The public files the demo inspects, in a fixed order: tau2 simulations,
    tau-bench trajectory lists, then tau2 domain folders."""
    paths = sorted((data_root / "tau2" / "simulations").glob("*.json"))
    paths += sorted((data_root / "tau-bench").glob("*.json"))
    domains = data_root / "tau2" / "domains"
    if domains.is_dir():
        paths += sorted(p for p in domains.iterdir() if (p / "tasks.json").is_file())
    return paths


def demo_sections(
    out_dir: Path,
    *,
    data_root: Path | None,
    seed: int,
    progress: Progress,
) -> list[Section]:
    """Inspect the public tau2-bench / tau-bench files under ``data_root``.

    Writes ``out_dir/traces.json`` (paths relative to the data root, so the file does not
    depend on where the data lives) and returns one report section with the table. When
    the data root is missing, the section says the public files were skipped.
    """
    section = Section("Real agent trajectories (tau2-bench, tau-bench)")
    root = data_root if data_root is not None and data_root.is_dir() else None
    paths = public_trace_paths(root) if root is not None else []
    if root is None or not paths:
        section.text(
            f"Public tau2-bench / tau-bench files were not found (data root: {data_root}); "
            "skipped. Pass --data-root or set TAU2_DATA_DIR to include them."
        )
        return [section]
    summaries: list[TraceSummary] = []
    for i, path in enumerate(paths):
        progress(i, len(paths), path.name)
        summaries.append(inspect_path(path))
    progress(len(paths), len(paths), "done")
    rel = [str(p.relative_to(root)) for p in paths]
    rows = [
        [
            name,
            s.format,
            s.episodes,
            s.tasks,
            s.tool_calls,
            s.tool_results,
            s.tool_errors,
            s.mean_reward,
        ]
        for name, s in zip(rel, summaries, strict=True)
    ]
    files = [{**s.as_dict(), "path": name} for name, s in zip(rel, summaries, strict=True)]
    write_results(
        Path(out_dir) / RESULTS_FILE,
        {
            "meta": run_metadata(
                command="toolaudit traces inspect", seed=seed, config={"files": rel}
            ),
            "files": files,
        },
    )
    section.text(
        "Every public trajectory file under the data root, read by the format-detecting "
        "loaders. For a domain folder, tasks are its tasks and tool calls its reference "
        "actions. Runs that ended early (agent_error, too_many_errors) keep tau2's reward "
        "of 0 but carry no reward components."
    )
    section.table("Public trace files", _HEADER, rows)
    return [section]

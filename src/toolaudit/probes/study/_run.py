"""The study runner every harness shares: run a study's specs into ``DIR/records.jsonl``.

Runs execute in parallel (joblib processes, or threads for a served model), are appended
and flushed as they finish, and a rerun skips every configuration already recorded, so an
interrupted study resumes. When the study completes the file is rewritten in canonical
order, so two studies with the same seeds give byte-identical records whatever the
parallelism. A harness hands over a ``runner`` (one spec -> one Episode); without one, the
specs are ResearchOps runs. Imports the ResearchOps harness (its default runner) and the
agents' order; nothing of the analysis or the report.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from toolaudit.errors import TraceFormatError
from toolaudit.probes._mutations import CONDITION_NAMES
from toolaudit.probes.agents._researchops import policy_rank
from toolaudit.probes.harnesses.researchops._harness import AgentFactories, run_one
from toolaudit.progress import Progress
from toolaudit.runs import complete_lines, exclusive, refuse_duplicate, write_run_config
from toolaudit.traces import Episode

logger = logging.getLogger(__name__)


Runner = Callable[[Any], Episode]


@dataclass(frozen=True)
class BatchRunner:
    """Runs several specs at once (an Inspect eval of many samples): ``run`` takes specs
    that share ``key`` and returns their Episodes in order, at most ``size`` at a time.
    A batch's records are written when it finishes, so a stopped study loses at most the
    batch in flight and resumes with the specs not yet recorded."""

    run: Callable[[Sequence[Any]], list[Episode]]
    key: Callable[[Any], Hashable]
    size: int

    def parts(self, todo: Sequence[Any]) -> list[Sequence[Any]]:
        """``todo`` grouped by key (in order of first appearance), cut into batches."""
        groups: dict[Hashable, list[Any]] = {}
        for spec in todo:
            groups.setdefault(self.key(spec), []).append(spec)
        return [part for group in groups.values() for part in _chunks(group, self.size)]


def _run_chunk(
    specs: Sequence[Any],
    agents: AgentFactories | None,
    runner: Runner | BatchRunner | None = None,
) -> list[str]:
    if isinstance(runner, BatchRunner):
        return [ep.model_dump_json() for ep in runner.run(specs)]
    if runner is not None:
        return [runner(s).model_dump_json() for s in specs]
    return [run_one(s, agents=agents).model_dump_json() for s in specs]


def _read_done(
    path: Path,
    *,
    known: Mapping[str, Any] | None = None,
    truncated: Literal["drop", "skip", "refuse"] = "drop",
) -> dict[str, str]:
    """Config hash -> record line of every complete record already in ``path``.

    A complete last record that lacks only its newline is kept; a truncated final line
    (an interrupted append) is dropped, skipped or refused by ``truncated``
    (:func:`toolaudit.runs.complete_lines`). A run recorded twice is refused naming both
    lines, and so is a record of another study: a hash that is none of ``known`` (the
    study's runs by config hash), named beside a line that is one of them.
    """
    done: dict[str, str] = {}
    seen: dict[str, int] = {}
    for lineno, line in complete_lines(path, truncated=truncated):
        try:
            key = json.loads(line)["source"]["config_hash"]
        except (json.JSONDecodeError, KeyError, TypeError):
            raise TraceFormatError(
                path, lineno, "source.config_hash", "not a probe run record"
            ) from None
        except RecursionError:
            raise TraceFormatError(path, lineno, None, "nested too deeply") from None
        if not isinstance(key, str):
            raise TraceFormatError(path, lineno, "source.config_hash", "not a string")
        refuse_duplicate(seen, key, path=path, line=lineno, field="source.config_hash")
        if known is not None and key not in known:
            ours = next((n for k, n in seen.items() if k in known), None)
            beside = f" (line {ours} is one of them)" if ours is not None else ""
            raise TraceFormatError(
                path, lineno, "source.config_hash",
                f"{key!r} is none of this study's runs{beside}: a record of another study "
                "or of other options; results of different options must not mix",
            )  # fmt: skip
        done[key] = line
    return done


def _chunks(items: Sequence[Any], size: int) -> Iterator[Sequence[Any]]:
    for i in range(0, len(items), size):
        yield items[i : i + size]


def run_study(
    out_dir: str | Path,
    specs: Sequence[Any],
    *,
    n_jobs: int = 1,
    progress: Progress | None = None,
    agents: AgentFactories | None = None,
    runner: Runner | BatchRunner | None = None,
    run_config: Mapping[str, Any] | None = None,
    threads: int = 1,
) -> Path:
    """Run ``specs`` into ``out_dir/records.jsonl``; returns the records path.

    Already-recorded configurations are skipped (resume); a record that is none of
    ``specs``, or one recorded twice, is refused before anything is written. Finished runs
    are appended and flushed chunk by chunk; at the end the file is rewritten in canonical
    order. ``run_config`` (the study's options) is written to ``run_config.json`` with
    the first record, so a run that fails before any record does not lock the folder.
    ``agents`` (picklable factories when ``n_jobs > 1``) adds policies by name;
    ``runner`` runs one spec of another harness (each run is written as it finishes), or
    a :class:`BatchRunner` many at once (each batch is written as it finishes);
    ``threads`` > 1 runs that many of its runs at a time in threads (a served model
    answers several conversations at once).
    """
    out = Path(out_dir)
    known = {s.config_hash(): s for s in specs}
    _read_done(out / "records.jsonl", known=known, truncated="skip")  # refused: nothing written
    with exclusive(out):  # a second run is refused; a failed start leaves no folder
        return _run_specs(out, specs, n_jobs=n_jobs, progress=progress, agents=agents,
                          runner=runner, run_config=run_config, threads=threads)  # fmt: skip


def _run_specs(
    out: Path,
    specs: Sequence[Any],
    *,
    n_jobs: int,
    progress: Progress | None,
    agents: AgentFactories | None,
    runner: Runner | BatchRunner | None = None,
    run_config: Mapping[str, Any] | None = None,
    threads: int = 1,
) -> Path:
    path = out / "records.jsonl"
    done = _read_done(path, known={s.config_hash(): s for s in specs})
    # Seed label by seed label: a study stopped part-way holds whole replicates (every
    # task and condition at seed 0 first); the file is put in canonical order at the end.
    todo = sorted(
        (s for s in specs if s.config_hash() not in done),
        key=lambda s: (s.seed_label, s.sort_key()),
    )
    logger.info("%d runs recorded, %d to run", len(done), len(todo))
    total, finished = len(specs), len(specs) - len(todo)
    cb = progress or (lambda d, t, label: None)
    cb(finished, total, "runs")
    # Scripted runs take microseconds: batch them. A model-driven run takes seconds: write
    # each one as it finishes, so an interruption loses at most the runs in flight.
    slow = runner is not None or any(s.agent for s in todo)
    chunk = 1 if slow else max(25, len(todo) // (8 * max(1, n_jobs)) + 1)
    parts = runner.parts(todo) if isinstance(runner, BatchRunner) else list(_chunks(todo, chunk))
    results: Iterable[list[str]]
    pool = None
    if threads > 1 and len(parts) > 1:
        from concurrent.futures import ThreadPoolExecutor

        pool = ThreadPoolExecutor(max_workers=threads)
        results = pool.map(lambda p: _run_chunk(p, agents, runner), parts)
    elif n_jobs == 1 or len(parts) <= 1:
        results = (_run_chunk(p, agents, runner) for p in parts)
    else:
        from joblib import Parallel, delayed

        results = Parallel(n_jobs=n_jobs, return_as="generator")(
            delayed(_run_chunk)(p, agents, runner) for p in parts
        )
    for lines in results:
        if run_config is not None:  # with the first record: a failed start locks nothing
            write_run_config(out, run_config)
            run_config = None
        # opened per chunk: a file replaced under a long study (a checkout, a copy back
        # from a backup) gets the next records, not an unlinked inode that dies with us
        with path.open("a", encoding="utf-8") as fh:
            fh.write("".join(line + "\n" for line in lines))
        finished += len(lines)
        cb(finished, total, "runs")
    if pool is not None:
        pool.shutdown()
    if run_config is not None:
        write_run_config(out, run_config)
    _canonicalise(path)
    return path


def _canonicalise(path: Path) -> None:
    lines = _read_done(path)
    ordered = sorted(lines.values(), key=lambda line: _record_key(json.loads(line)))
    tmp = path.with_suffix(".jsonl.tmp")
    tmp.write_text("".join(line + "\n" for line in ordered), encoding="utf-8")
    os.replace(tmp, path)


def _record_key(obj: dict[str, Any]) -> tuple[Any, ...]:
    src = obj["source"]
    return (
        obj["task_id"],
        policy_rank(src["policy"]),
        src["policy"],
        CONDITION_NAMES.index(src["condition"]) if src["condition"] in CONDITION_NAMES else 99,
        src["seed_label"],
        src["config_hash"],
    )

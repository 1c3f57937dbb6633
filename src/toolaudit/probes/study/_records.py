"""A probe study's records: read them back (checked against the study's own options) and
reduce them to runs through each record's harness reader.

Here the analysis meets the harnesses: :func:`reduce_records` hands the analysis the
harnesses' registry (:func:`toolaudit.probes.harnesses.reader_of`), so no analysis module
imports a harness.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from toolaudit.errors import DataError, TraceFormatError
from toolaudit.probes._seam import REAL_HARNESSES, RecordReader
from toolaudit.probes.analysis._record_checks import check_study_records
from toolaudit.probes.analysis._runs import Run, runs_of
from toolaudit.probes.harnesses import reader_of
from toolaudit.probes.harnesses.researchops._harness import SUITE, ResearchOpsReader
from toolaudit.probes.harnesses.researchops._verifier import Verifier
from toolaudit.probes.study._runconfig import read_run_config
from toolaudit.traces import Episode, iter_json_objects, validate_record

_RECORD_KEYS = ("config_hash", "policy", "passed", "true_quality", "seed_label")
_TASK_ID = re.compile(r"ro-\d{2}")


def reduce_records(episodes: Sequence[Episode], *, verifier: Verifier | None = None) -> list[Run]:
    """Rescore every record after mapping it back to canonical terms, through the reader
    of the harness that recorded it (ResearchOps with ``verifier``, the composite verifier
    by default; Inspect and tau2-bench with the benchmark's own scorer, run when the record
    was made)."""
    own = ResearchOpsReader(verifier) if verifier is not None else None

    def reader(ep: Episode) -> RecordReader:
        found = reader_of(ep)
        return own if own is not None and found.name == own.name else found

    return runs_of(episodes, reader)


def load_records(path: str | Path) -> list[Episode]:
    """Read a study's records (a folder holding ``records.jsonl``, or the file).

    Every record must be a run of ``probe run`` (``source.policy``, ``source.config_hash``,
    ``source.passed`` and a ResearchOps task id), once, of the study its folder's
    ``run_config.json`` describes, with finite scores
    (:func:`~toolaudit.probes.analysis._record_checks.check_study_records`); anything else is
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

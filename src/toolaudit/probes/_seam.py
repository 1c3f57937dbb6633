"""The harness seam: where agent runs happen, and how a recorded run is read back.

A *harness* lists its tasks, runs one task under one condition and epoch (returning an
:class:`~toolaudit.traces.Episode`), and rescores a recorded Episode under the canonical
evaluation. Three harnesses exist: the controlled ResearchOps suite (``researchops``,
known defects, scripted verifier), Inspect AI (``inspect``: any Inspect task, tau2-bench
through inspect_evals, scored by the task's own scorer) and tau2-bench itself (``tau2``:
its orchestrator, environments and evaluator).

The analysis (VRG, rescored VRG, MSR/MTR, behaviour change, equivalence, McNemar, the
controls) never asks which harness produced a record: it reads every record through a
:class:`RecordReader`, chosen by the record's ``source.harness``
(:func:`toolaudit.probes.harnesses.reader_of`):

* ``canonical(episode)`` maps the trajectory back to canonical tool names and
  presentation (what the agent did, in the original evaluation's terms);
* ``rescore(episode)`` is that trajectory's score under the canonical evaluation
  (counterfactual rescoring). ResearchOps recomputes it from the record; an Inspect or a
  tau2 run was rescored by the benchmark's own scorer right after it ran, and the record
  carries it.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from typing import Any, Protocol

from toolaudit.errors import ConfigError
from toolaudit.traces import Episode

HARNESSES = ("researchops", "inspect", "tau2")
#: Harnesses of real benchmarks (fresh runs scored by the benchmark's own evaluation).
REAL_HARNESSES = ("inspect", "tau2")


class RunSpec(Protocol):
    """One run of a study: hashed into ``source.config_hash``; sorted canonically."""

    seed_label: int

    def config_hash(self) -> str:
        """A stable hash of everything that determines the run."""
        ...

    def sort_key(self) -> tuple[Any, ...]:
        """Canonical record order."""
        ...


class RecordReader(Protocol):
    """How the analysis reads one harness's records."""

    name: str

    def canonical(self, episode: Episode) -> Episode:
        """The trajectory in canonical tool names and presentation."""
        ...

    def rescore(self, episode: Episode) -> float:
        """The trajectory's score under the canonical evaluation."""
        ...


class Harness(RecordReader, Protocol):
    """Where agent runs happen (see the module docstring)."""

    def task_ids(self) -> Sequence[str]:
        """Every task this harness can run, in its own order."""
        ...

    def run(self, spec: Any) -> Episode:
        """Run one task under one condition and epoch; the Episode's ``source`` carries
        ``harness``, ``config_hash``, ``policy``, ``condition``, ``seed_label`` and
        ``passed``."""
        ...


def config_hash(config: dict[str, Any]) -> str:
    """A run's configuration hash: 16 hex digits of SHA-256 over its sorted, compact
    JSON (every harness hashes its run specs this way)."""
    text = json.dumps(config, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def choose_ids(
    ids: Sequence[str],
    *,
    task_ids: Sequence[str] | None,
    limit: int | None,
    what: str,
    noun: str = "sample",
) -> list[str]:
    """The ids a study runs: the named ``task_ids`` (each must be one of ``ids``; a
    repeat runs once), else the first ``limit``, else all. ``what`` names the task set and
    ``noun`` its items in the refusal of an unknown id."""
    if task_ids is not None:
        known = set(ids)
        unknown = [t for t in task_ids if t not in known]
        if unknown:
            raise ConfigError(
                f"--task-ids: {what} has no {noun} {unknown[0]!r} "
                f"(it has {len(ids)}, e.g. {list(ids)[:3]})"
            )
        return list(dict.fromkeys(task_ids))
    return list(ids[:limit]) if limit is not None else list(ids)

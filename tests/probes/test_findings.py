"""Findings, then prose: report sentences are functions of computed findings."""

from __future__ import annotations

import copy
import inspect

from toolaudit.probes import sentence, study_section
from toolaudit.probes.analysis._findings import attribution, repeat_control_finding, study_findings
from toolaudit.probes.analysis._selection import selection_experiment
from toolaudit.probes.reports import _study as report_module
from toolaudit.report import Finding
from toolaudit.report._document import render_markdown


def _cell(result: dict, policy: str, condition: str) -> dict:
    return next(c for c in result["cells"] if c["policy"] == policy and c["condition"] == condition)


def test_attribution_sentence_follows_the_numbers(study_result: dict) -> None:
    cell = dict(_cell(study_result, "careful", "tool_rename"))
    f = attribution(cell)
    assert f.verdict == "scoring_rule" and f.value == cell["vrg"]
    before = sentence(f)
    assert "the scoring rule, not the agent, caused it" in before
    cell.update(behavior_changed_rate=0.5, vrg_rescored=0.2, vrg_rescored_ci95=[0.1, 0.3])
    after = sentence(attribution(cell))
    assert "behavioural change" in after and "0.200 [0.100, 0.300]" in after and "50%" in after
    assert "the scoring rule, not the agent" not in after
    cell.update(vrg_ci95=[-0.01, 0.02])
    # no live gap, yet the executed operations score lower: the scoring rule hides it
    assert attribution(cell).verdict == "masked_by_scoring_rule"
    assert "hides a behavioural change" in sentence(attribution(cell))
    cell.update(vrg_rescored=0.0, vrg_rescored_ci95=[-0.02, 0.03])
    assert attribution(cell).verdict == "no_gap"


def test_report_text_changes_when_a_finding_flips(study_result: dict) -> None:
    text = render_markdown("t", [study_section(study_result)])
    assert "careful × tool_rename" in text and "the scoring rule, not the agent" in text
    changed = copy.deepcopy(study_result)
    cell = _cell(changed, "careful", "tool_rename")
    cell.update(behavior_changed_rate=1.0, vrg_rescored=0.25, vrg_rescored_ci95=[0.2, 0.3])
    changed["conclusions"] = [f.model_dump() for f in study_findings(changed, margin=0.10)]
    new = render_markdown("t", [study_section(changed)])
    line = next(ln for ln in new.splitlines() if ln.startswith("careful × tool_rename"))
    assert "behavioural change of the agent" in line and "0.250 [0.200, 0.300]" in line


def test_no_conclusion_literal_in_report_module() -> None:
    src = inspect.getsource(report_module)
    for literal in (
        "the scoring rule, not the agent",
        "a real behavioural failure",
        "reward falls for every",
        "never flip here",
        "chosen on 12 tasks",
    ):
        assert literal not in src


def test_selection_caption_takes_n_select(study_result: dict, study_runs: list) -> None:
    changed = copy.deepcopy(study_result)
    changed["selection"] = selection_experiment(study_runs, n_select=10)
    changed["conclusions"] = [f.model_dump() for f in study_findings(changed, margin=0.10)]
    text = render_markdown("t", [study_section(changed)])
    assert "chosen on 10 tasks, evaluated on the 15 held out" in text
    assert "on 10 tasks; held-out pass rate on 15" in text


def test_repeat_control_sentence_states_temperature_and_interval() -> None:
    row = {
        "policy": "llm",
        "repeat_flip_rate": 0.2,
        "repeat_flip_rate_ci95": [0.1, 0.3],
        "n_pairs": 30,
        "changed_flip_rate": {"misleading_names": 0.6},
        "exceeds_repeat": {"misleading_names": True, "tool_rename": False},
    }
    text = sentence(repeat_control_finding(row, 0.7))
    assert text.startswith("llm at temperature 0.7: identical reruns flip 0.200 [0.100, 0.300]")
    assert "exceed that interval under misleading_names" in text
    zero = dict(row, repeat_flip_rate=0.0, repeat_flip_rate_ci95=[0.0, 0.0])
    assert "flipped no outcome (30 pairs)" in sentence(repeat_control_finding(zero, 0.0))
    # one pair (the demo): no interval, said in words, and nothing compared with it
    one = dict(row, repeat_flip_rate=1.0, repeat_flip_rate_ci95=[None, None], n_pairs=1,
               exceeds_repeat={})  # fmt: skip
    text = sentence(repeat_control_finding(one, 0.7))
    assert text == (
        "llm at temperature 0.7: identical reruns flip 1.000 of outcomes (1 pair(s): "
        "interval not estimable), so no change can be compared with it."
    )


def test_conclusions_in_probe_json_are_findings(study_result: dict) -> None:
    names = [Finding(**f).name for f in study_result["conclusions"]]
    assert "probe.positive_control" in names and "probe.equivalence" in names
    assert "probe.attribution.careful.tool_rename" in names


def test_llm_cells_table_shows_each_pairs_rerun_beside_its_first_run() -> None:
    """Issue 26: the table showed the first run's pass rate and reward in the repeat row
    (0.000 and 0.421 in both rows) while the rerun passed with 0.8."""
    from toolaudit.audits import result_meta
    from toolaudit.probes.contracts._llm import PROBE_LLM_AUDIT, ProbeLLMResult

    cell = {"policy": "llm", "vrg": None, "n_pairs": 1, "pass_rate_original": 0.0,
            "reward_original": 0.421, "mean_calls_mutated": 3.0}  # fmt: skip
    rerun = {**cell, "condition": "repeat", "pass_rate_mutated": 1.0, "reward_mutated": 0.8,
             "mean_calls_mutated": 5.0}  # fmt: skip
    agent = {"model": "m", "temperature": 0.7, "max_steps": 2, "tasks": 1, "seeds": 1}
    result = ProbeLLMResult.new(
        result_meta(command="probe run --policies llm", seed=0, config={}),
        cells=[{**cell, "condition": "original"}, rerun],
        repeat_control=[],
        conclusions=[],
        agent=agent,
        records=2,
    )
    (sec,) = PROBE_LLM_AUDIT.sections(result)
    table = next(b for b in sec.blocks if type(b).__name__ == "Table")
    assert table.header[2:6] == ["pass rate, first", "pass rate, this", "reward, first",
                                 "reward, this"]  # fmt: skip
    assert table.rows == [["original", 1, 0.0, 0.0, 0.421, 0.421, 3.0],
                          ["repeat", 1, 0.0, 1.0, 0.421, 0.8, 5.0]]  # fmt: skip

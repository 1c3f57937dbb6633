"""The seed's findings on the full controlled study, and the diagnostics' definitions."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from toolaudit.probes import run_probe_study
from toolaudit.probes.agents._researchops import TOOL_USING
from toolaudit.probes.analysis._runs import Run, analyze_runs, ptd_by_task


def _cell(result: dict, policy: str, condition: str) -> dict:
    return next(c for c in result["cells"] if c["policy"] == policy and c["condition"] == condition)


def test_study_full_size_and_probe_json_keys(study_dir: Path, study_result: dict) -> None:
    assert study_result["records"] == 25 * 5 * 7 * 3
    on_disk = json.loads((study_dir / "probe.json").read_text())
    cell = on_disk["cells"][1]
    for key in (
        "policy",
        "condition",
        "vrg",
        "vrg_rescored",
        "msr",
        "mtr",
        "ptd",
        "behavior_changed_rate",
    ):
        assert key in cell
    assert on_disk["meta"]["seed"] == 0


def test_careful_tool_rename_gap_is_quarter_and_rescoring_closes_it(study_result: dict) -> None:
    c = _cell(study_result, "careful", "tool_rename")
    assert c["vrg"] == pytest.approx(0.25, abs=1e-9)
    assert c["vrg_rescored"] == 0.0
    assert c["behavior_changed_rate"] == 0.0


def test_overfit_tool_rename_gap_survives_rescoring_and_behaviour_changes(
    study_result: dict,
) -> None:
    c = _cell(study_result, "overfit", "tool_rename")
    assert c["vrg_rescored"] > 0.1
    assert c["vrg_ci95"][0] > 0
    assert c["behavior_changed_rate"] == 1.0


def test_shortcut_msr_zero_small_gap_misranked_by_gap_only(study_result: dict) -> None:
    f = study_result["findings"]
    assert f["shortcut_mean_msr"] == 0.0
    assert f["shortcut_mean_abs_vrg"] < 0.1
    assert f["shortcut_gap_only_rank"] == 1
    assert f["shortcut_misranked_by_gap"] is True
    careful = next(r for r in study_result["policies"] if r["policy"] == "careful")
    assert careful["mean_abs_vrg"] > f["shortcut_mean_abs_vrg"]
    assert careful["msr_rank"] == 1


def test_shortcut_mtr_is_null_not_zero(study_result: dict) -> None:
    c = _cell(study_result, "shortcut", "tool_rename")
    assert c["n_original_pass"] == 0
    assert c["mtr"] is None


def test_proxy_exploit_ptd_large_positive_on_proxy_tasks(study_result: dict) -> None:
    c = _cell(study_result, "proxy_exploit", "original")
    assert c["ptd"] > 1.0
    assert _cell(study_result, "careful", "original")["ptd"] < 0
    assert _cell(study_result, "proxy_exploit", "reformat")["n_proxy_tasks"] == 12


def test_misleading_names_lower_every_tool_using_policy(study_result: dict) -> None:
    for policy in TOOL_USING:
        c = _cell(study_result, policy, "misleading_names")
        assert c["vrg"] > 0, policy
        assert c["reward_mutated"] < c["reward_original"]
    assert study_result["findings"]["misleading_names_lowers_every_tool_user"] is True


def test_repeat_control_flips_nothing_and_multiplicity_is_monotone(study_result: dict) -> None:
    for row in study_result["repeat_control"]:
        assert row["repeat_flip_rate"] == 0.0
    for c in study_result["cells"]:
        if c["condition"] != "original":
            assert c["mcnemar_p"] <= c["mcnemar_p_holm"] <= c["mcnemar_p_bonferroni"] + 1e-12


def test_study_rerun_same_seed_is_byte_identical(study_dir: Path, tmp_path: Path) -> None:
    again = run_probe_study(tmp_path, n_seeds=3, seed=0, n_jobs=1)
    assert again.read_bytes() == (study_dir / "records.jsonl").read_bytes()


def _run(task: str, cond: str, seed: int, *, reward: float, passed: bool, **kw) -> Run:
    base = dict(
        policy="p",
        rescored=reward,
        quality=0.0,
        proxy=None,
        proxy_task=False,
        actions=("a",),
        calls=1,
    )
    base.update(kw)
    return Run(task=task, condition=cond, seed=seed, reward=reward, passed=passed, **base)


def test_analyze_runs_definitions_on_hand_made_pairs() -> None:
    runs = [
        _run("t1", "original", 0, reward=1.0, passed=True),
        _run("t1", "tool_rename", 0, reward=0.5, passed=False, rescored=1.0),
        _run("t2", "original", 0, reward=0.2, passed=False),
        _run("t2", "tool_rename", 0, reward=0.8, passed=True, actions=("b",)),
    ]
    cell = analyze_runs(runs, n_boot=50)["cells"][1]
    assert cell["vrg"] == pytest.approx(((1.0 - 0.5) + (0.2 - 0.8)) / 2)
    assert cell["vrg_rescored"] == pytest.approx(((1.0 - 1.0) + (0.2 - 0.8)) / 2)
    assert cell["msr"] == 0.5
    assert cell["mtr"] == 0.0  # the one originally passing pair fails when mutated
    assert cell["behavior_changed_rate"] == 0.5
    assert (cell["mcnemar_b"], cell["mcnemar_c"]) == (1, 1)


def test_ptd_uses_max_proxy_and_max_quality_per_task() -> None:
    runs = [
        _run("t1", "original", 0, reward=0, passed=False, proxy=4.0, quality=0.0, proxy_task=True),
        _run("t1", "original", 1, reward=0, passed=False, proxy=1.0, quality=1.0, proxy_task=True),
        _run("t2", "original", 0, reward=0, passed=False, proxy=None, quality=1.0),
    ]
    assert ptd_by_task(runs) == {"t1": 3.0}


def test_a_condition_that_errors_more_than_its_original_is_an_evaluation_effect() -> None:
    nan = float("nan")
    runs = [
        _run("t1", "original", 0, reward=1.0, passed=True),
        _run("t2", "original", 0, reward=1.0, passed=True),
        _run("t3", "original", 0, reward=nan, passed=False),
        _run("t1", "tool_rename", 0, reward=nan, passed=False),
        _run("t2", "tool_rename", 0, reward=nan, passed=False),
        _run("t3", "tool_rename", 0, reward=nan, passed=False),
        _run("t1", "reformat", 0, reward=1.0, passed=True),
        _run("t2", "reformat", 0, reward=1.0, passed=True),
        _run("t3", "reformat", 0, reward=nan, passed=False),
    ]
    out = analyze_runs(runs, n_boot=50)
    assert out["evaluation_effects"] == [
        {"policy": "p", "condition": "tool_rename", "n_pairs": 3,
         "not_scored_original": 1, "not_scored_mutated": 3},
    ]  # fmt: skip
    assert out["cells_not_scored"] == [{"policy": "p", "condition": "tool_rename", "n_runs": 3}]


def test_the_gap_figure_has_a_panel_per_condition_run_and_none_other() -> None:
    """The committed telecom report drew empty frames for rubric_change and
    incentive_change, which the study did not run (issue 56)."""
    from toolaudit.probes.reports._study import _gap_figure

    cells = [{"policy": p, "condition": c, "vrg": 0.5, "vrg_rescored": 0.0}
             for p in ("careful", "inert") for c in ("tool_rename", "reformat", "repeat")]  # fmt: skip
    fig = _gap_figure(cells)
    assert [ax.get_title() for ax in fig.axes] == ["tool_rename", "reformat"]
    only_repeat = _gap_figure([{"policy": "inert", "condition": "repeat", "vrg": 0.0,
                                "vrg_rescored": 0.0}])  # fmt: skip
    assert [ax.get_title() for ax in only_repeat.axes] == ["repeat"]

"""Paired comparisons and rerun flips on real tau2 results and on hand-made files."""

from __future__ import annotations

from pathlib import Path

import pytest

from toolaudit.errors import DataError
from toolaudit.probes import compare_files, compare_sides, read_side, rerun_flips
from toolaudit.traces import Episode, write_jsonl

RETAIL_A = "tau2/simulations/retail__gpt-4.1__user-gpt-4.1__test40x1.json"
RETAIL_B = "tau2/simulations/retail__ft-gpt-4.1-sft__user-gpt-4.1__test40x1.json"
AIRLINE_A = "tau2/simulations/airline__gpt-4.1__user-gpt-4.1__test20x1.json"
AIRLINE_QWEN = "tau2/simulations/airline__qwen2.5-7b__user-gpt-4.1__50x1.json"


def test_compare_files_retail_test40_pair(shared_data: Path) -> None:
    out = compare_files(shared_data / RETAIL_A, shared_data / RETAIL_B, n_boot=500)
    assert out["paired_tasks"] == 40 and out["only_in_a"] == [] and out["only_in_b"] == []
    assert out["mean_reward_a"] == 0.85 and out["mean_reward_b"] == 0.85
    assert out["mcnemar"] == {"a_pass_b_fail": 6, "a_fail_b_pass": 6, "p": 1.0}
    assert out["delta"] == 0.0
    lo, hi = out["delta_ci90"]
    assert lo < 0 < hi and out["equivalence"] == "inconclusive"  # interval wider than ±0.10
    assert out["rerun_flips_a"]["flip_rate"] is None  # one trial per task


def test_compare_files_counts_premature_runs_and_unmatched_tasks(shared_data: Path) -> None:
    kept = compare_files(shared_data / AIRLINE_A, shared_data / AIRLINE_QWEN, n_boot=200)
    assert kept["b"]["premature_runs"] == 10  # 9 agent_error + 1 too_many_errors
    assert kept["b"]["excluded_premature"] == 0
    assert kept["paired_tasks"] == 20 and len(kept["only_in_b"]) == 30
    dropped = compare_files(
        shared_data / AIRLINE_A, shared_data / AIRLINE_QWEN, exclude_premature=True, n_boot=200
    )
    assert dropped["b"]["excluded_premature"] == 10
    assert dropped["paired_tasks"] + len(dropped["only_in_a"]) == 20
    assert dropped["paired_tasks"] < 20


def _ep(task: str, trial: int, reward: float | None, end: str = "user_stop") -> Episode:
    return Episode(task_id=task, trial=trial, reward=reward, termination_reason=end)


def test_read_side_counts_unrewarded_and_missing_trials(tmp_path: Path) -> None:
    path = tmp_path / "a.jsonl"
    write_jsonl(
        path,
        [
            _ep("1", 0, 1.0),
            _ep("1", 1, 0.0),
            _ep("2", 0, 1.0),
            _ep("2", 1, None),
            _ep("3", 0, 0.0, "agent_error"),
            _ep("3", 1, 0.0),
        ],
    )
    side = read_side(path)
    s = side.summary()
    assert s["unrewarded"] == ["2#1"] and s["premature"] == ["3#0:agent_error"]
    assert s["tasks_missing_trials"] == {"2": 1}
    assert s["scored_runs"] == 5


def test_rerun_flips_rate_from_trials(tmp_path: Path) -> None:
    path = tmp_path / "a.jsonl"
    write_jsonl(
        path,
        [_ep("1", 0, 1.0), _ep("1", 1, 0.0), _ep("1", 2, 1.0), _ep("2", 0, 1.0), _ep("2", 1, 1.0)],
    )
    out = rerun_flips(read_side(path), n_boot=200)
    # Task 1: pairs (1,0) (1,1) (0,1) -> 2 flips of 3; task 2: 0 of 1.
    assert out["flip_rate"] == pytest.approx(2 / 4)
    assert out["n_pairs"] == 4 and out["n_tasks"] == 2


def test_compare_sides_no_common_task_raises(tmp_path: Path) -> None:
    write_jsonl(tmp_path / "a.jsonl", [_ep("1", 0, 1.0)])
    write_jsonl(tmp_path / "b.jsonl", [_ep("2", 0, 1.0)])
    with pytest.raises(DataError, match="share no scored task"):
        compare_sides(read_side(tmp_path / "a.jsonl"), read_side(tmp_path / "b.jsonl"))

"""Paired comparisons and rerun flips on real tau2 results and on hand-made files."""

from __future__ import annotations

from pathlib import Path

import pytest

from toolaudit.errors import DataError
from toolaudit.probes import compare_files, read_side, rerun_flips
from toolaudit.probes.analysis._compare import compare_sides
from toolaudit.traces import Episode, write_jsonl

RETAIL_A = "tau2/simulations/retail__gpt-4.1__user-gpt-4.1__test40x1.json"
RETAIL_B = "tau2/simulations/retail__ft-gpt-4.1-sft__user-gpt-4.1__test40x1.json"
AIRLINE_A = "tau2/simulations/airline__gpt-4.1__user-gpt-4.1__test20x1.json"
AIRLINE_QWEN = "tau2/simulations/airline__qwen2.5-7b__user-gpt-4.1__50x1.json"


def test_compare_files_retail_test40_pair(shared_data: Path) -> None:
    out = compare_files(shared_data / RETAIL_A, shared_data / RETAIL_B, n_boot=500)
    assert out["paired_tasks"] == 40 and out["only_in_a"] == [] and out["only_in_b"] == []
    assert out["mean_reward_a"] == 0.85 and out["mean_reward_b"] == 0.85
    assert out["mcnemar"] == {"applicable": True, "a_pass_b_fail": 6, "a_fail_b_pass": 6, "p": 1.0}
    assert out["task_level"]["tasks_b_higher"] == 6 == out["task_level"]["tasks_a_higher"]
    assert out["delta"] == 0.0
    lo, hi = out["delta_ci90"]
    assert lo < 0 < hi and out["equivalence"] == "inconclusive"  # interval wider than ±0.10
    assert out["rerun_flips_a"]["flip_rate"] is None  # one trial per task


def test_compare_names_the_changed_tasks_and_the_command_that_opens_them(
    shared_data: Path,
) -> None:
    out = compare_files(shared_data / RETAIL_A, shared_data / RETAIL_B, n_boot=200)
    assert out["warnings"] == []  # same domain, task set and user simulator
    assert len(out["changed_tasks"]) == out["tasks_changed"] == 12
    assert out["a"]["view"] == [f"tau2 view --file {shared_data / RETAIL_A}"]
    assert out["a"]["user_models"] == out["b"]["user_models"] == ["gpt-4.1"]


def test_compare_warns_when_task_set_or_user_simulator_differ(shared_data: Path) -> None:
    gemini = "tau2/simulations/airline__gemini-2.5-flash__user-same__10tasks-x2.json"
    out = compare_files(shared_data / AIRLINE_A, shared_data / gemini, n_boot=200)
    task_set, simulator = out["warnings"]
    assert task_set.startswith("A and B differ in task set: 17 task(s) only in A (13, 16,")
    assert "7 only in B (0, 1, 3, 4, 5 and 2 more); only the 3 tasks both ran" in task_set
    assert simulator.startswith("the user simulator differs: A uses gpt-4.1, B uses gemini/")


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


GEMINI = "tau2/simulations/airline__gemini-2.5-flash__user-same__10tasks-x2.json"
GROK = "tau2/simulations/airline__grok-4-fast-reasoning__user-same__41tasks-66sims.json"


def _raw_rewards(path: Path) -> dict[str, list[float]]:
    """Independent of toolaudit: rewards per task straight from the raw JSON."""
    import json
    from collections import defaultdict

    out: dict[str, list[float]] = defaultdict(list)
    for sim in json.loads(path.read_text())["simulations"]:
        out[str(sim["task_id"])].append(float(sim["reward_info"]["reward"]))
    return dict(out)


def _raw_pass_hat_k(rewards: dict[str, list[float]], k: int) -> float:
    from math import comb

    vals = [comb(sum(abs(r - 1) <= 1e-6 for r in v), k) / comb(len(v), k) for v in rewards.values()]
    return sum(vals) / len(vals)


def test_compare_multi_trial_files_task_level_against_raw_counts(shared_data: Path) -> None:
    ra, rb = _raw_rewards(shared_data / GEMINI), _raw_rewards(shared_data / GROK)
    assert len(ra) == 10 and {len(v) for v in ra.values()} == {2}
    assert len(rb) == 41 and sorted({len(v) for v in rb.values()}) == [1, 2, 3]
    out = compare_files(shared_data / GEMINI, shared_data / GROK, n_boot=500)
    common = sorted(set(ra) & set(rb), key=int)
    assert out["paired_tasks"] == len(common) == 10
    tl = out["task_level"]
    rate = {
        side: {t: sum(r >= 0.5 for r in v) / len(v) for t, v in r_.items()}
        for side, r_ in (("a", ra), ("b", rb))
    }
    want = sum(rate["b"][t] - rate["a"][t] for t in common) / len(common)
    assert tl["delta"] == pytest.approx(want)
    assert tl["tasks_b_higher"] == sum(rate["b"][t] > rate["a"][t] for t in common)
    assert tl["tasks_a_higher"] == sum(rate["b"][t] < rate["a"][t] for t in common)
    lo, hi = tl["delta_ci90"]
    assert lo <= tl["delta"] <= hi
    # Several trials per task: trial indices are arbitrary, so no McNemar over them.
    assert out["mcnemar"]["applicable"] is False and out["mcnemar"]["p"] is None
    # both airline, but different task sets and user simulators (each plays its own user)
    assert [w.split(":")[0] for w in out["warnings"]] == [
        "A and B differ in task set",
        "the user simulator differs",
    ]


def test_pass_hat_k_of_real_multi_trial_files_against_raw_counts(shared_data: Path) -> None:
    ra, rb = _raw_rewards(shared_data / GEMINI), _raw_rewards(shared_data / GROK)
    a = read_side(shared_data / GEMINI).summary()["pass_hat_k"]
    assert a["max_k"] == 2
    assert a["pass_hat_k"]["1"] == pytest.approx(_raw_pass_hat_k(ra, 1))
    assert a["pass_hat_k"]["2"] == pytest.approx(_raw_pass_hat_k(ra, 2))
    b = read_side(shared_data / GROK).summary()["pass_hat_k"]
    # tau2 stops at the smallest trial count (1 here); larger k are over fewer tasks.
    assert list(b["pass_hat_k"]) == ["1"]
    assert b["pass_hat_k"]["1"] == pytest.approx(_raw_pass_hat_k(rb, 1))
    two = {t: v for t, v in rb.items() if len(v) >= 2}
    assert b["pass_hat_k_partial"]["2"]["n_tasks"] == len(two) == 24
    assert b["pass_hat_k_partial"]["2"]["value"] == pytest.approx(_raw_pass_hat_k(two, 2))


def test_rerun_flips_of_real_multi_trial_files_against_raw_counts(shared_data: Path) -> None:
    from itertools import combinations

    for rel in (GEMINI, GROK):
        raw = _raw_rewards(shared_data / rel)
        pairs = [(a >= 0.5) != (b >= 0.5) for v in raw.values() for a, b in combinations(v, 2)]
        out = rerun_flips(read_side(shared_data / rel), n_boot=200)
        assert out["n_pairs"] == len(pairs)
        assert out["flip_rate"] == pytest.approx(sum(pairs) / len(pairs))


def test_compare_airline_with_retail_warns(shared_data: Path) -> None:
    out = compare_files(shared_data / AIRLINE_A, shared_data / RETAIL_A, n_boot=100)
    assert len(out["warnings"]) == 2  # the domains, then the task sets
    assert "airline" in out["warnings"][0] and "retail" in out["warnings"][0]


def test_read_side_nan_reward_names_file_record_field(shared_data: Path, tmp_path: Path) -> None:
    import json

    from toolaudit.errors import TraceFormatError

    doc = json.loads((shared_data / AIRLINE_A).read_text())
    doc["simulations"][3]["reward_info"]["reward"] = float("nan")
    path = tmp_path / "nan.json"
    path.write_text(json.dumps(doc))  # writes the bare token NaN, as Python's json does
    with pytest.raises(
        TraceFormatError, match=r"nan\.json, field 'simulations\[3\]\.reward_info\.reward'"
    ):
        read_side(path)


def test_one_paired_task_is_not_estimable_never_a_verdict(tmp_path: Path) -> None:
    # One paired task: a bootstrap over one cluster repeats it, so there is no interval
    # and no verdict (the issue saw "different" at [-0.70, -0.70]).
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    write_jsonl(a, [_ep("1", 0, 0.9)])
    write_jsonl(b, [_ep("1", 0, 0.2)])
    out = compare_files(a, b, n_boot=200)
    assert out["equivalence"] == "not_estimable"
    assert out["change_detected"] is None and out["larger_than_margin"] is None
    assert all(v != v for v in out["delta_ci90"])  # NaN bounds
    assert out["task_level"]["equivalence"] == "not_estimable"


def test_different_means_the_interval_excludes_zero_and_the_facts_are_named(
    shared_data: Path,
) -> None:
    from toolaudit.stats import Interval, equivalence_verdict

    small = equivalence_verdict(Interval(-0.16, -0.30, -0.02, 0.90))
    assert (small.verdict, small.excludes_zero, small.outside_margin) == ("different", True, False)
    large = equivalence_verdict(Interval(-0.5, -0.70, -0.30, 0.90))
    assert (large.verdict, large.excludes_zero, large.outside_margin) == ("different", True, True)
    out = compare_files(shared_data / RETAIL_A, shared_data / RETAIL_B, n_boot=500)
    assert out["change_detected"] is False and out["larger_than_margin"] is False


def test_compare_pass_k_on_paired_tasks_and_changed_tasks_with_endings(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from toolaudit.cli.main import main

    # B has a task A lacks (passed) and partial credit: its own pass^1 covers 3 tasks and
    # counts reward 1 only; the paired figures cover tasks 1 and 2.
    write_jsonl(tmp_path / "a.jsonl", [_ep("1", 0, 1.0), _ep("2", 0, 1.0)])
    write_jsonl(
        tmp_path / "b.jsonl",
        [_ep("1", 0, 1.0), _ep("2", 0, 0.5, "max_steps"), _ep("3", 0, 1.0)],
    )
    r = compare_sides(read_side(tmp_path / "a.jsonl"), read_side(tmp_path / "b.jsonl"))
    assert r["b"]["pass_hat_k"]["pass_hat_k"] == {"1": pytest.approx(2 / 3)}
    assert r["paired_pass_hat_k"]["b"]["pass_hat_k"] == {"1": 0.5}
    assert r["paired_pass_hat_k"]["a"]["pass_hat_k"] == {"1": 1.0}
    assert r["mean_reward_b"] == 0.75
    assert r["changed"] == [{"task": "2", "reward_a": 1.0, "reward_b": 0.5,
                             "endings_a": ["user_stop"], "endings_b": ["max_steps"]}]  # fmt: skip
    assert main(["probe", "compare", str(tmp_path / "a.jsonl"), str(tmp_path / "b.jsonl")]) == 0
    out = capsys.readouterr().out
    assert "pass^k on the 2 paired tasks" in out and "  B pass^1 0.500" in out
    assert "changed tasks: 1 of 2" in out
    assert "task 2: A 1.00 (user_stop) -> B 0.50 (max_steps)" in out

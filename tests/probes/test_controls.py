"""The honest controls of a real-harness study: the no-op baseline, the positive control
judged against headroom, informative equivalence, and the first differing action."""

from __future__ import annotations

from toolaudit.probes.analysis._controls import (
    first_differences,
    mark_informative,
    noop_baseline,
    positive_controls,
)
from toolaudit.probes.analysis._runs import Run


def _cell(policy: str, pass_orig: float, vrg: float, iv: list) -> dict:
    return {"policy": policy, "condition": "misleading_names", "pass_rate_original": pass_orig,
            "vrg": vrg, "vrg_ci95": iv, "n_pairs": 10}  # fmt: skip


def test_positive_control_is_judged_against_headroom() -> None:
    cells = [
        _cell("a", 0.6, 0.4, [0.2, 0.6]),  # room for a drop, and a drop: detected
        _cell("b", 0.6, 0.0, [-0.1, 0.1]),  # room, no drop: not detected
        _cell("c", 0.05, 0.05, [0.0, 0.1]),  # passes at most the margin: not testable
        _cell("d", 1.0, 1.0, [None, None]),  # one task: no interval
        _cell("inert", 0.0, 0.0, [0.0, 0.0]),  # the no-op agent is not a tool user
    ]
    verdicts = {r["policy"]: r["verdict"] for r in positive_controls(cells, margin=0.10)}
    assert verdicts == {"a": "detected", "b": "not_detected", "c": "not_testable",
                        "d": "not_estimable"}  # fmt: skip


def test_equivalence_is_informative_only_where_the_control_was_detected() -> None:
    cells = [
        {"policy": "a", "condition": "tool_rename", "equivalence": "equivalent"},
        {"policy": "c", "condition": "reformat", "equivalence": "equivalent"},
        {"policy": "a", "condition": "repeat", "equivalence": "equivalent"},
    ]
    mark_informative(cells, [{"policy": "a", "verdict": "detected"},
                             {"policy": "c", "verdict": "not_testable"}])  # fmt: skip
    assert cells[0]["equivalence_informative"] is True
    assert cells[1]["equivalence_informative"] is False
    assert cells[1]["equivalence_note"] == "uninformative: positive control not testable"
    assert "equivalence_informative" not in cells[2]


def _run(policy: str, cond: str, task: str, passed: bool, actions: tuple[str, ...]) -> Run:
    return Run(task=task, policy=policy, condition=cond, seed=0, reward=float(passed),
               rescored=float(passed), passed=passed, quality=float("nan"), proxy=None,
               proxy_task=False, actions=actions, calls=len(actions))  # fmt: skip


def test_noop_baseline_counts_tasks_an_inert_agent_passes() -> None:
    runs = [_run("inert", "original", f"t{i}", i < 2, ()) for i in range(8)]
    row = noop_baseline(runs, seed=0, n_boot=200)
    assert row["pass_rate"] == 0.25 and row["tasks_passed"] == ["t0", "t1"]
    assert row["ci95"][0] <= 0.25 <= row["ci95"][1]
    assert noop_baseline([], seed=0, n_boot=10) == {"policy": "inert", "run": False}


def test_first_difference_names_the_first_differing_action() -> None:
    runs = [
        _run("p", "original", "t1", True, ("a()", "b()", "c()")),
        _run("p", "tool_rename", "t1", False, ("a()", "x()")),
        _run("p", "original", "t0", True, ("a()",)),
        _run("p", "tool_rename", "t0", True, ("a()",)),
    ]
    cells = [{"policy": "p", "condition": "tool_rename"}]
    first_differences(runs, cells)
    d = cells[0]["first_difference"]
    assert (d["task"], d["index"], d["original"], d["mutated"]) == ("t1", 1, "b()", "x()")
    assert cells[0]["changed_tasks"] == ["t1"]

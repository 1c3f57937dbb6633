"""The ResearchOps suite, its policies and its composite verifier."""

from __future__ import annotations

from toolaudit.probes import EvalConfig, invert_episode, run_one
from toolaudit.probes.harnesses.researchops._harness import RunSpec
from toolaudit.probes.harnesses.researchops._mutations import condition_config
from toolaudit.probes.harnesses.researchops._suite import (
    N_TASKS,
    ResearchOpsEnv,
    is_proxy_task,
    make_task,
)
from toolaudit.probes.harnesses.researchops._verifier import PASS_THRESHOLD, CompositeVerifier


def test_make_task_has_25_tasks_12_with_proxy_channel() -> None:
    assert N_TASKS == 25
    assert sum(is_proxy_task(i) for i in range(N_TASKS)) == 12


def test_make_task_target_is_best_valid_candidate_and_deterministic() -> None:
    for i in range(N_TASKS):
        task = make_task(i, 2)
        assert task == make_task(i, 2)
        valid = [c for c in task.candidates if task.satisfies(c.id)]
        assert task.target == max(valid, key=lambda c: c.est_score).id


def test_true_quality_ignores_names_and_proxy_fields() -> None:
    task = make_task(4, 0)
    target = task.candidate(task.target)
    for cond in ("original", "tool_rename", "misleading_names"):
        env = ResearchOpsEnv(task, condition_config(cond))
        shown = condition_config(cond).shown_names()["submit_report"]
        env.call(shown, {"dataset_id": task.target, "score": target.true_score, "impact": 2.0})
        assert env.true_quality() == 1.0


def test_careful_original_scores_full_marks_and_passes() -> None:
    ep = run_one(RunSpec(7, "careful", "original", 0))
    assert ep.reward == 1.0
    assert ep.source["passed"] is True
    assert ep.source["true_quality"] == 1.0


def test_careful_renamed_loses_exactly_canonical_name_weight() -> None:
    ep = run_one(RunSpec(7, "careful", "tool_rename", 0))
    assert ep.reward == 0.75
    assert ep.reward_components["canonical_names"] == 0.0
    task = make_task(7, 0)
    rescored = CompositeVerifier().score(
        invert_episode(ep, condition_config("tool_rename")), task, EvalConfig()
    )
    assert rescored.total == 1.0


def test_overfit_renamed_takes_fallback_branch_without_domain_tools() -> None:
    ep = run_one(RunSpec(7, "overfit", "tool_rename", 0))
    assert ep.action_names() == ["file_report"]
    task = make_task(7, 0)
    assert ep.source["final_state"]["report"]["dataset_id"] == task.hint


def test_shortcut_uses_no_domain_tool_and_never_passes() -> None:
    for i in range(N_TASKS):
        ep = run_one(RunSpec(i, "shortcut", "original", 0))
        assert ep.action_names() == ["submit_report"]
        assert ep.reward < PASS_THRESHOLD


def test_proxy_exploit_maxes_visible_reward_on_proxy_tasks_only() -> None:
    ep = run_one(RunSpec(2, "proxy_exploit", "original", 0))
    assert ep.source["proxy_reward"] == 4.0
    assert ep.source["true_quality"] == 0.0
    assert ep.reward_components["hack_risk"] == 0.5
    plain = run_one(RunSpec(3, "proxy_exploit", "original", 0))
    assert plain.source["proxy_reward"] is None
    assert plain.reward == 1.0


def test_careful_misleading_names_calls_wrong_operation() -> None:
    ep = run_one(RunSpec(1, "careful", "misleading_names", 0))
    assert ep.tool_results()[0].error is True
    assert ep.source["true_quality"] == 0.0
    assert ep.source["passed"] is False

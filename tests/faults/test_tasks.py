"""The paired set: the seed's site rule and intent control over the 114 retail tasks."""

from __future__ import annotations

import pytest

from toolaudit.faults import domain_census
from toolaudit.faults._intent import contradiction, stated_status, status_constraint
from toolaudit.faults._tasks import DROPOUT_REASONS, dropout_counts, episode_census
from toolaudit.traces import load_domain, load_episodes


@pytest.fixture(scope="module")
def census(shared_data):
    return domain_census(load_domain(shared_data / "tau2" / "domains" / "retail"))


def test_census_accounts_for_all_114_retail_tasks(census):
    counts = dropout_counts(census)
    qualifying = sum(c.qualifies for c in census)
    assert len(census) == 114 and qualifying + sum(counts.values()) == 114
    assert qualifying == 50
    assert counts == {
        "no_actions": 2,
        "replay_error": 15,
        "no_site": 45,
        "no_later_call": 1,
        "intent_contradiction": 1,
    }
    assert set(counts) <= set(DROPOUT_REASONS)
    assert all(c.detail for c in census if not c.qualifies)


def test_site_at_position_two_admits_tasks_without_get_user_details_first(census):
    # Task 0: find_user_id_by_name_zip, then get_order_details (position two): the true
    # payment id is not yet in the prefix (the seed's decisive N_m control).
    by_id = {c.task_id: c for c in census}
    assert by_id["0"].qualifies and by_id["0"].site.position == 2
    early = [c for c in census if c.qualifies and c.site.position == 2]
    assert len(early) == 8  # 10 tasks call it second; 2 of them fail on replay


def test_intent_control_drops_task_whose_user_says_received_a_pending_order(census):
    by_id = {c.task_id: c for c in census}
    assert by_id["69"].reason == "intent_contradiction"
    assert "#W2417020" in by_id["69"].detail and "pending" in by_id["69"].detail


def test_stated_status_reads_the_sentence_about_the_site_order():
    rec = {"order_id": "#W1234567", "items": [{"name": "Laptop"}], "status": "pending"}
    said = stated_status("Hi. You want to return the laptop you received. Thanks.", rec)
    assert said.belief == "delivered" and "laptop" in said.sentence
    assert contradiction(said, rec) is not None
    assert contradiction(said, {**rec, "status": "delivered"}) is None
    # a sentence about another item does not speak for this order
    assert stated_status("You received the kettle.", rec).belief is None
    # negation is read before the plain verb
    assert stated_status("Order 1234567 has not arrived yet.", rec).belief == "not_delivered"


def test_status_constraint_separates_policy_from_unconstrained():
    rec = {"order_id": "#W1", "items": [], "status": "pending"}
    none = stated_status("", rec)
    gated = [("cancel_pending_order", {"order_id": "#W1", "reason": "no longer needed"})]
    assert status_constraint(none, rec, gated) == "policy"
    assert status_constraint(none, rec, [("cancel_pending_order", {"order_id": "#W2"})]) == ("none")
    stated = stated_status("My order #W1 is still pending.", rec)
    assert status_constraint(stated, rec, gated) == "stated"


def test_census_groups_falsified_status_tasks(census):
    groups = {c.constraint for c in census if c.qualifies}
    assert groups == {"stated", "policy", "none"}


def test_tau_bench_ids_do_not_borrow_tau2_intents(shared_data):
    domain = load_domain(shared_data / "tau2" / "domains" / "retail")
    bench = shared_data / "tau-bench" / "retail__tool-calling__openai-model-masked__100x1.json"
    with_domain = episode_census(load_episodes(bench), domain=domain)
    without = episode_census(load_episodes(bench), domain=None)
    assert [c.reason for c in with_domain] == [c.reason for c in without]

"""Replay, the site selector and the arms (no model needed)."""

from __future__ import annotations

import json

import pytest

from toolaudit.errors import ConfigError
from toolaudit.faults import first_call_site, load_retail_domain, make_arms, mini_domain, replay
from toolaudit.faults._prompt import call_segments, event_segments, system_segment
from toolaudit.faults._replay import ARMS, ORDER_NOT_FOUND, Site, ToolStep


def _arm_texts(traj, site, payloads):
    """Each arm's whole serialized trajectory, split at the site's return."""
    out = {}
    for arm, p in payloads.items():
        before = "".join(system_segment("P", ["get_order_details"]) for _ in [0])
        for ev in traj.events[: site.event]:
            before += "".join(event_segments(ev))
        before += "".join(call_segments(traj.events[site.event]))
        after = "".join("".join(event_segments(ev)) for ev in traj.events[site.event + 1 :])
        whole = before + p.content + after
        out[arm] = (before, p.content, after, whole)
    return out


def test_site_selector_picks_first_order_lookup_at_position_two():
    d = mini_domain()
    sel = first_call_site()
    sites = {t.task_id: sel(replay(t, d)) for t in d.tasks}
    assert sites["mini_cancel"] == Site(position=2, event=3)
    # mini_address calls get_order_details at positions 1 and 2: the second one is the site
    assert sites["mini_address"] == Site(position=2, event=3)


def test_site_selector_reports_reason_when_absent(shared_data):
    d = load_retail_domain(shared_data)
    sel = first_call_site()
    reasons = [sel(replay(t, d)) for t in d.tasks[:40] if t.actions and len(t.actions) < 3]
    assert all(isinstance(r, str) and "get_order_details" in r for r in reasons)


def test_arms_share_byte_identical_prefix_and_later_returns():
    d = mini_domain()
    traj = replay(d.tasks[1], d)
    site = first_call_site()(traj)
    step = traj.events[site.event]
    payloads, skipped = make_arms(
        step.content, arms=ARMS, task_id=traj.task_id, owned_payment_ids={"paypal_2222222"}, seed=0
    )  # noqa: E501
    assert skipped == {} and set(payloads) == set(ARMS)
    texts = _arm_texts(traj, site, payloads)
    befores = {t[0] for t in texts.values()}
    afters = {t[2] for t in texts.values()}
    assert len(befores) == 1 and len(afters) == 1
    sites = {t[1] for t in texts.values()}
    assert len(sites) == len(ARMS)  # only the site's return differs
    assert payloads["failed"].content == ORDER_NOT_FOUND


def test_falsified_arms_change_one_field_within_the_schema():
    d = mini_domain()
    traj = replay(d.tasks[1], d)
    step = traj.events[first_call_site()(traj).event]
    assert isinstance(step, ToolStep)
    payloads, _ = make_arms(
        step.content, arms=ARMS, task_id="t", owned_payment_ids={"paypal_2222222"}, seed=3
    )  # noqa: E501
    clean = json.loads(step.content)
    status = json.loads(payloads["falsified_status"].content)
    assert clean["status"] == "delivered" and status["status"] == "pending"
    assert {k for k in clean if clean[k] != status[k]} == {"status"}
    pay = json.loads(payloads["falsified_payment"].content)
    fake = pay["payment_history"][0]["payment_method_id"]
    assert (
        fake.startswith("paypal_")
        and fake != "paypal_2222222"
        and len(fake) == len("paypal_2222222")
    )
    assert {k for k in clean if clean[k] != pay[k]} == {"payment_history"}
    assert step.content.startswith(payloads["truncated"].content)
    assert len(payloads["truncated"].content) == len(step.content) // 2


def test_make_arms_rejects_unknown_arm():
    with pytest.raises(ConfigError, match="arms"):
        make_arms("{}", arms=["clean", "bogus"], task_id="t", owned_payment_ids=set(), seed=0)


def test_replay_runs_reference_writes_against_a_copy(shared_data):
    d = load_retail_domain(shared_data)
    traj = replay(d.tasks[0], d)
    last = traj.events[-1]
    assert isinstance(last, ToolStep) and last.name == "exchange_delivered_order_items"
    assert json.loads(last.content)["status"] == "exchange requested"
    assert d.db["orders"]["#W2378156"]["status"] == "delivered"


def test_recorded_trajectories_load_with_sites(shared_data):
    from toolaudit.faults import load_recorded

    sel = first_call_site()
    tau2 = load_recorded(
        shared_data / "tau2" / "simulations" / "retail__gpt-4.1__user-gpt-4.1__test40x1.json"
    )
    bench = load_recorded(
        shared_data / "tau-bench" / "retail__tool-calling__openai-model-masked__100x1.json"
    )
    assert len(tau2) == 40 and len(bench) == 100
    assert sum(not isinstance(sel(t), str) for t in tau2) == 37
    assert sum(not isinstance(sel(t), str) for t in bench) == 93
    step = tau2[0].events[tau2[0].step_indices()[0]]
    assert isinstance(step, ToolStep) and step.name == "find_user_id_by_email"
    assert step.content == "isabella_lopez_6490"

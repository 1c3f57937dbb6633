"""Replay, the site selector and the arms (no model needed)."""

from __future__ import annotations

import json

import pytest

from toolaudit.errors import ConfigError
from toolaudit.faults import first_call_site, mini_domain, replay
from toolaudit.faults._chat import event_messages
from toolaudit.faults._replay import (
    ARMS,
    ORDER_NOT_FOUND,
    NoSite,
    Site,
    ToolStep,
    Trajectory,
    make_arms,
)
from toolaudit.traces import load_domain


def _retail(shared_data):
    return load_domain(shared_data / "tau2" / "domains" / "retail")


def _steps(*names):
    return Trajectory("t", tuple(ToolStep(n, {}, "{}") for n in names))


def _arm_texts(traj, site, payloads):
    """Each arm's whole conversation as JSON, split at the site's return."""
    out = {}
    for arm, p in payloads.items():
        before = [
            m for i, ev in enumerate(traj.events[: site.event]) for m in event_messages(ev, i)
        ]
        site_msgs = event_messages(traj.events[site.event], site.event, content=p.content)
        after = [
            m
            for i, ev in enumerate(traj.events[site.event + 1 :], start=site.event + 1)
            for m in event_messages(ev, i)
        ]
        out[arm] = (
            json.dumps([*before, site_msgs[0]]),
            site_msgs[1]["content"],
            json.dumps(after),
        )
    return out


def test_site_selector_counts_positions_from_one():
    sel = first_call_site()
    # the second call is position two: it qualifies (the seed's N_m control tasks)
    assert sel(_steps("find_user_id_by_email", "get_order_details", "x")) == Site(2, 1)
    # the first call is position one: too early; the next get_order_details is the site
    assert sel(_steps("get_order_details", "get_user_details", "get_order_details", "x")) == (
        Site(3, 2)
    )
    assert sel(_steps("get_order_details", "x")) == NoSite(
        "no_site", "no get_order_details call at position 2 or later"
    )
    assert sel(_steps("a", "get_order_details")).reason == "no_later_call"


def test_site_selector_on_mini_domain():
    d = mini_domain()
    sel = first_call_site()
    sites = {t.id: sel(replay(t, d.db)) for t in d.tasks}
    assert sites["mini_cancel"] == Site(position=3, event=3)
    # mini_address calls get_order_details at positions 2 and 3: the first is the site
    assert sites["mini_address"] == Site(position=2, event=2)


def test_site_selector_reports_reason_when_absent(shared_data):
    d = _retail(shared_data)
    sel = first_call_site()
    short = [t for t in d.tasks[:40] if t.reference_actions and len(t.reference_actions) < 2]
    reasons = [sel(replay(t, d.db)) for t in short]
    assert reasons and all(isinstance(r, NoSite) for r in reasons)


def test_arms_share_byte_identical_prefix_and_later_returns():
    d = mini_domain()
    traj = replay(d.tasks[1], d.db)
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
    traj = replay(d.tasks[1], d.db)
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
    d = _retail(shared_data)
    traj = replay(d.tasks[0], d.db)
    last = traj.events[-1]
    assert isinstance(last, ToolStep) and last.name == "exchange_delivered_order_items"
    assert json.loads(last.content)["status"] == "exchange requested"
    assert d.db["orders"]["#W2378156"]["status"] == "delivered"


def test_recorded_trajectories_load_through_traces_with_sites(shared_data):
    from toolaudit.faults._tasks import episode_census

    sims = shared_data / "tau2" / "simulations"
    from toolaudit.traces import load_episodes

    tau2 = episode_census(
        load_episodes(sims / "retail__gpt-4.1__user-gpt-4.1__test40x1.json"), domain=None
    )
    bench = episode_census(
        load_episodes(
            shared_data / "tau-bench" / "retail__tool-calling__openai-model-masked__100x1.json"
        ),
        domain=None,
    )
    assert len(tau2) == 40 and len(bench) == 100
    assert sum(c.qualifies for c in tau2) == 37
    assert sum(c.qualifies for c in bench) == 94
    first = next(c for c in tau2 if c.qualifies)
    step = first.trajectory.events[first.trajectory.step_indices()[0]]
    assert isinstance(step, ToolStep) and step.name == "find_user_id_by_email"

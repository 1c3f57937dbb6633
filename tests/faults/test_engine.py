"""The KV-cached scorer against an independent computation: a plain full forward pass
from the first token with full output logits (NaiveScorer), past the sliding window."""

from __future__ import annotations

import math

import numpy as np
import pytest

from toolaudit.faults import first_call_site, make_arms, mini_domain, replay
from toolaudit.faults._engine import CachedScorer, NaiveScorer
from toolaudit.faults._prompt import (  # noqa: E501
    CALL_OPEN,
    RET_CLOSE,
    TURN_MODEL,
    call_segments,
    event_segments,
    name_segment,
    schema_only_segments,
    system_segment,
)
from toolaudit.faults._readings import action_distribution

TOOLS = ["find_user_id_by_email", "get_user_details", "get_order_details", "cancel_pending_order"]


@pytest.fixture(scope="module")
def case(embedded_lm):
    model, tok = embedded_lm
    d = mini_domain()
    traj = replay(d.tasks[0], d.db)
    site = first_call_site()(traj)
    system = system_segment(d.policy, TOOLS)
    shared = [system]
    for ev in traj.events[: site.event]:
        shared += event_segments(ev)
    shared += call_segments(traj.events[site.event])
    payloads, _ = make_arms(
        traj.events[site.event].content,
        arms=["clean", "failed"],
        task_id="t",
        owned_payment_ids=set(),
        seed=0,
    )  # noqa: E501
    return model, tok, traj, site, shared, payloads


def test_cached_s1_matches_full_forward_past_sliding_window(case):
    model, tok, traj, site, shared, payloads = case
    cached, naive = CachedScorer(model, tok), NaiveScorer(model, tok)
    assert len(cached.sequence(shared)) > model.config.sliding_window + 100
    cached.prime(shared[:1])
    cached.prime(shared)
    for p in payloads.values():
        a = cached.seq_logprobs(shared, p.content)
        b = naive.seq_logprobs(shared, p.content)
        assert a.shape == b.shape == (len(cached.encode(p.content)),)
        assert np.max(np.abs(a - b)) < 1e-3
    # the output layer ran only on scored positions, not on the whole prefix
    assert cached.positions_scored == sum(len(cached.encode(p.content)) for p in payloads.values())


def test_cached_s0_matches_full_forward(case):
    model, tok, traj, site, shared, payloads = case
    step = traj.events[site.event]
    ctx = schema_only_segments(step)
    a = CachedScorer(model, tok).seq_logprobs(ctx, step.content)
    b = NaiveScorer(model, tok).seq_logprobs(ctx, step.content)
    assert np.max(np.abs(a - b)) < 1e-3


def test_candidate_scores_match_full_forward_and_form_a_distribution(case):
    model, tok, traj, site, shared, payloads = case
    prefix = [*shared, payloads["clean"].content, RET_CLOSE, TURN_MODEL, CALL_OPEN]
    cands = [name_segment(t) for t in TOOLS[1:]]
    cached = CachedScorer(model, tok)
    a = cached.candidate_logprobs(prefix, cands)
    b = NaiveScorer(model, tok).candidate_logprobs(prefix, cands)
    assert np.max(np.abs(np.array(a) - np.array(b))) < 1e-3
    pi = action_distribution(cached, [*shared, payloads["clean"].content, RET_CLOSE], TOOLS)
    assert math.isclose(sum(pi.probs.values()), 1.0, abs_tol=1e-9)
    assert 0.0 <= pi.entropy <= math.log(len(TOOLS) + 1) + 1e-9
    assert pi.leading in [*TOOLS, "reply"]


@pytest.mark.slow
def test_task_readings_cached_equal_naive_on_every_reading(case):
    """Every row of a whole task (all arms, k = 0..1): cached == naive within 1e-3."""
    from toolaudit.faults import ARMS
    from toolaudit.faults._readings import task_readings

    model, tok, traj, site, _, _ = case
    d = mini_domain()
    system = system_segment(d.policy, TOOLS)
    payloads, _ = make_arms(
        traj.events[site.event].content, arms=ARMS, task_id="t", owned_payment_ids=set(), seed=0
    )  # noqa: E501
    kw = {"system": system, "tools": TOOLS, "k_max": 1}
    a = task_readings(traj, site, payloads, scorer=CachedScorer(model, tok), **kw)
    b = task_readings(traj, site, payloads, scorer=NaiveScorer(model, tok), **kw)
    assert len(a) == len(b) == 2 * len(ARMS)
    for x, y in zip(a, b, strict=True):
        assert x["leading_action"] == y["leading_action"]
        for q in ("s0", "s1", "g", "entropy", "p_call", "p_reread", "p_write", "p_reply"):
            assert abs(x[q] - y[q]) < 1e-3, q

"""The action distribution on the real embedded Qwen, checked against the model's own
greedy continuation (an independent reading of the same decision point). Slow: a
decision point renders the policy and the 16 tool schemas (about 2,600 tokens)."""

from __future__ import annotations

import math

import pytest

from toolaudit.faults import first_call_site, mini_domain, replay
from toolaudit.faults._actions import OPENERS, read_distributions
from toolaudit.faults._chat import SLOT, event_messages, render_split, tool_specs
from toolaudit.faults._schemas import TOOL_SCHEMAS


@pytest.fixture(scope="module")
def decision(qwen_lm):
    d = mini_domain()
    traj = replay(d.tasks[0], d.db)
    site = first_call_site()(traj)
    msgs = [{"role": "system", "content": d.policy}]
    for i, ev in enumerate(traj.events[: site.event + 1]):
        msgs += event_messages(ev, i)
    return msgs, qwen_lm.render(msgs, tool_specs(), add_generation_prompt=True)


@pytest.mark.slow
def test_pi_is_a_distribution_over_17_actions(qwen_lm, decision):
    _, text = decision
    (pi,) = read_distributions(qwen_lm, [text], list(TOOL_SCHEMAS))
    assert len(pi.probs) == 17 and math.isclose(sum(pi.probs.values()), 1.0, abs_tol=1e-9)
    assert set(pi.openers) == set(OPENERS)
    assert 0.0 <= pi.p_unrecognised <= sum(pi.openers.values()) + 1e-12
    assert 0.0 <= pi.entropy <= math.log(17) + 1e-9


@pytest.mark.slow
def test_leading_action_matches_greedy_continuation(qwen_lm, decision):
    _, text = decision
    (pi,) = read_distributions(qwen_lm, [text], list(TOOL_SCHEMAS))
    (greedy,) = qwen_lm.complete([text], max_tokens=24)
    called = [t for t in TOOL_SCHEMAS if f'"{t}"' in greedy]
    written = (called[:1] or ["reply"])[0]
    top3 = sorted(pi.probs, key=lambda a: -pi.probs[a])[:3]
    # greedy decoding takes the most likely token at each step, so what the model writes
    # is among the most likely actions, and is the leader when the leader is confident
    assert written in top3, (greedy, top3)
    if pi.probs[pi.leading] > 0.5:
        assert written == pi.leading, greedy


@pytest.mark.slow
def test_render_split_cuts_at_the_return(qwen_lm, decision):
    msgs, _ = decision
    *head, call, ret = msgs
    split = render_split(qwen_lm, [*head, call, {**ret, "content": SLOT}], tool_specs())
    whole = qwen_lm.render([*head, call, ret], tool_specs(), add_generation_prompt=False)
    assert whole == split.context + ret["content"] + split.after


def test_distribution_from_scores_known_answer():
    from toolaudit.faults._actions import distribution_from_scores, requests_for

    tools = ["a", "b"]
    reqs = requests_for("CTX", tools)
    assert [c for _, c in reqs[:3]] == list(OPENERS)
    assert reqs[3] == ("CTX", '{"name": "a') and all(ctx == "CTX" for ctx, _ in reqs)
    ln = math.log
    # P('{"') = 0.6 split a 0.5 / b 0.25 (0.25 names no known tool); fence 0.1 all to b;
    # <tool_call> negligible; the reply takes 0.3
    opener = [[ln(0.6)], [ln(0.1)], [ln(1e-9)]]
    names = [[ln(0.6), ln(0.5)], [ln(0.6), ln(0.25)], [ln(0.1), ln(0.0 + 1e-300)], [ln(0.1)]]
    names += [[ln(1e-9)], [ln(1e-9)]]
    pi = distribution_from_scores(opener + names, tools)
    z = 0.3 + 0.25 + 0.3  # calls a (0.6 * 0.5), b (0.6 * 0.25 + 0.1) and the reply
    assert math.isclose(pi.probs["a"], 0.3 / z, rel_tol=1e-6)
    assert math.isclose(pi.probs["b"], 0.25 / z, rel_tol=1e-6)
    assert math.isclose(pi.probs["reply"], 0.3 / z, rel_tol=1e-6)
    assert math.isclose(pi.p_unrecognised, 0.6 * 0.25, rel_tol=1e-6)
    assert math.isclose(sum(pi.probs.values()), 1.0) and pi.leading == "a"


def test_a_tool_name_that_begins_another_keeps_only_its_own_mass():
    from toolaudit.faults._actions import distribution_from_scores, requests_for

    tools = ["get", "get_order"]
    ln = math.log
    # P('{"') = 0.8; the name begins with "get" 0.75, of which "get_order" takes 0.5
    opener = [[ln(0.8)], [ln(1e-9)], [ln(1e-9)]]
    names = [[ln(0.8), ln(0.75)], [ln(0.8), ln(0.5)]] + [[ln(1e-9)]] * 4
    assert len(opener + names) == len(requests_for("CTX", tools))
    pi = distribution_from_scores(opener + names, tools)
    z = 0.8 * 0.25 + 0.8 * 0.5 + 0.2
    assert math.isclose(pi.probs["get"], 0.2 / z, rel_tol=1e-6)
    assert math.isclose(pi.probs["get_order"], 0.4 / z, rel_tol=1e-6)
    assert math.isclose(pi.p_unrecognised, 0.8 * 0.25, rel_tol=1e-6)


@pytest.mark.slow
def test_the_model_s_own_call_is_recognised(qwen_lm, decision):
    """The regression behind the closing quote: the embedded Qwen opens a JSON call at
    this decision (P('{"') about 0.95), and nearly all of that mass names a known tool."""
    _, text = decision
    (pi,) = read_distributions(qwen_lm, [text], list(TOOL_SCHEMAS))
    assert pi.openers['{"'] > 0.5
    assert pi.p_unrecognised < 0.1 * pi.openers['{"'], pi

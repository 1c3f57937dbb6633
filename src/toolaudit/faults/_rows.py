"""The readings of one task: S0, S1, G and the action distribution per arm and step.

At step ``k`` (``k = 0`` is the injected call at the site) ``S1`` scores the return of
call ``site + k`` under the whole rendered prefix (policy, the 16 tool schemas, the
conversation) and ``S0`` under that tool's schema and the call alone; ``G = S1 - S0``
(nats per token). ``s0_first`` / ``s1_first`` score the return's first token alone: the
seed's length control (an error string is short, a record long). The action
distribution is read at the decision right after that return (``toolaudit.faults._actions``).
All of a task's requests go to the model in two batches, so every arm's shared prefix
is run once by the model layer.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from toolaudit.faults._actions import distribution_from_scores, requests_for
from toolaudit.faults._chat import SLOT, event_messages, render_split, schema_only_messages
from toolaudit.faults._chat import tool_specs as _specs
from toolaudit.faults._replay import ArmPayload, Site, ToolStep, Trajectory, reference_after
from toolaudit.faults._retail import REREAD_TOOLS, WRITE_TOOLS
from toolaudit.models import ChatTurn


def _mean(lp: Sequence[float]) -> float:
    return float(-sum(lp) / len(lp))


def task_rows(
    lm: Any,
    traj: Trajectory,
    site: Site,
    payloads: dict[str, ArmPayload],
    *,
    policy: str,
    tools: Sequence[str],
    k_max: int = 3,
) -> list[dict[str, Any]]:
    """Rows ``{task, arm, k, s0, s1, g, entropy, leading_action, agrees_reference,
    p_reread, p_write, p_reply, pi, p_unrecognised, ...}`` for every arm and step."""
    specs = _specs(tools)
    events = traj.events
    steps = traj.step_indices()
    head: list[ChatTurn] = [{"role": "system", "content": policy}] if policy else []
    for i, ev in enumerate(events[: site.event]):
        head += event_messages(ev, i)
    site_step = events[site.event]
    assert isinstance(site_step, ToolStep)
    true_payment = _first_payment_id(site_step.content)
    prefix_text = json.dumps(head)
    payment_in_prefix = true_payment is not None and true_payment in prefix_text
    plans: list[dict[str, Any]] = []
    for arm, payload in payloads.items():
        msgs = list(head)
        prev = site.event
        for k in range(k_max + 1):
            if site.call_index + k >= len(steps):
                break
            e_i = steps[site.call_index + k]
            step = events[e_i]
            assert isinstance(step, ToolStep)
            for j in range(prev + 1, e_i):
                msgs += event_messages(events[j], j)
            content = payload.content if k == 0 else step.content
            with_slot = [*msgs, *event_messages(step, e_i, content=SLOT)]
            split = render_split(lm, with_slot, specs)
            msgs += event_messages(step, e_i, content=content)
            decision = lm.render(msgs, specs, add_generation_prompt=True)
            s0_ctx = render_split(lm, schema_only_messages(step), _specs([step.name])).context
            plans.append(
                {
                    "arm": arm,
                    "k": k,
                    "step": step,
                    "event": e_i,
                    "content": content,
                    "s1_ctx": split.context,
                    "s0_ctx": s0_ctx,
                    "decision": decision,
                    "note": payload.note if k == 0 else "",
                }
            )
            prev = e_i
    per = len(requests_for("", tools))
    requests = [(p["s1_ctx"], p["content"]) for p in plans]
    requests += [(p["s0_ctx"], p["content"]) for p in plans]
    for p in plans:
        requests += requests_for(p["decision"], tools)
    scores = lm.loglikelihood(requests)  # one batch: the layer runs shared prefixes once
    base = 2 * len(plans)
    dists = [
        distribution_from_scores(scores[base + i * per : base + (i + 1) * per], tools)
        for i in range(len(plans))
    ]
    rows = []
    for n, (plan, pi) in enumerate(zip(plans, dists, strict=True)):
        lp1, lp0 = scores[n], scores[len(plans) + n]
        reference = reference_after(traj, plan["event"])
        step = plan["step"]
        rows.append(
            {
                "task": traj.task_id,
                "arm": plan["arm"],
                "k": plan["k"],
                "position": site.position + plan["k"],
                "tool": step.name,
                "s0": _mean(lp0),
                "s1": _mean(lp1),
                "g": _mean(lp1) - _mean(lp0),
                "s0_first": float(-lp0[0]),
                "s1_first": float(-lp1[0]),
                "n_tokens": len(lp1),
                "entropy": pi.entropy,
                "leading_action": pi.leading,
                "reference_action": reference,
                "agrees_reference": pi.leading == reference,
                "pi": pi.probs,
                "p_unrecognised": pi.p_unrecognised,
                "p_openers": pi.openers,
                "p_call": pi.p_call,
                "p_reread": pi.mass(REREAD_TOOLS),
                "p_write": pi.mass(WRITE_TOOLS),
                "p_reply": pi.probs["reply"],
                "note": plan["note"],
                "payment_in_prefix": payment_in_prefix,
            }
        )
    return rows


def _first_payment_id(content: str) -> str | None:
    try:
        record = json.loads(content)
    except json.JSONDecodeError:
        return None
    history = record.get("payment_history") if isinstance(record, dict) else None
    if history and isinstance(history[0], dict):
        value = history[0].get("payment_method_id")
        return str(value) if value else None
    return None


_PAYMENT_ID = re.compile(r"\b(?:credit_card|gift_card|paypal)_\d+\b")


def owned_payment_ids(traj: Trajectory, site: Site, db: Any) -> set[str]:
    """Payment ids the falsified one must avoid: every id in the trajectory and every
    method the site order's user owns in the database (when there is one)."""
    ids: set[str] = set()
    for ev in traj.events:
        text = ev.content if isinstance(ev, ToolStep) else ev.text
        ids.update(_PAYMENT_ID.findall(text))
    step = traj.events[site.event]
    assert isinstance(step, ToolStep)
    user = json.loads(step.content).get("user_id")
    users = db.get("users", {}) if isinstance(db, dict) else {}
    if user and user in users:
        ids.update(users[user].get("payment_methods", {}))
    return ids

"""The readings of one task: S0, S1, G and the action distribution per arm and step.

At step ``k`` (``k = 0`` is the injected call at the site) ``S1`` scores the return of
call ``site + k`` under the whole prefix and ``S0`` under that tool's schema and the call
alone; ``G = S1 - S0`` (nats per token). The action distribution is read at the decision
right after that return: ``P(call)`` is the probability of opening a tool call, split over
the tools by their name continuations (multi-token, renormalized over the tool set);
``P(reply) = 1 - P(call)``.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from toolaudit.faults._prompt import (
    CALL_OPEN,
    RET_CLOSE,
    TURN_MODEL,
    call_segments,
    event_segments,
    name_segment,
    schema_only_segments,
)
from toolaudit.faults._replay import ArmPayload, Site, ToolStep, Trajectory, reference_after
from toolaudit.faults._retail import REREAD_TOOLS, WRITE_TOOLS


class Scorer(Protocol):
    """What the readings need from a backend (``CachedScorer`` or ``NaiveScorer``)."""

    def seq_logprobs(self, prefix: Sequence[str], target: str) -> np.ndarray: ...

    def candidate_logprobs(
        self, prefix: Sequence[str], candidates: Sequence[str]
    ) -> list[float]: ...


@dataclass(frozen=True, slots=True)
class ActionDistribution:
    """pi over the tools and ``reply``, with the call probability it was built from."""

    probs: dict[str, float]
    p_call: float

    @property
    def entropy(self) -> float:
        """Entropy in nats (bounded by log K)."""
        return float(-sum(p * math.log(p) for p in self.probs.values() if p > 0))

    @property
    def leading(self) -> str:
        """The most probable action (ties broken by action order)."""
        return max(self.probs, key=lambda a: self.probs[a])

    def mass(self, actions: Sequence[str]) -> float:
        """Total probability of a group of actions."""
        return float(sum(self.probs.get(a, 0.0) for a in actions))


def action_distribution(
    scorer: Scorer, prefix: Sequence[str], tools: Sequence[str]
) -> ActionDistribution:
    """pi at the decision after ``prefix`` (which ends with a closed tool return)."""
    decision = [*prefix, TURN_MODEL]
    lp_open = float(np.sum(scorer.seq_logprobs(decision, CALL_OPEN)))
    names = np.array(
        scorer.candidate_logprobs([*decision, CALL_OPEN], [name_segment(t) for t in tools])
    )
    split = np.exp(names - np.logaddexp.reduce(names))
    p_call = math.exp(lp_open)
    probs = {t: float(p_call * q) for t, q in zip(tools, split, strict=True)}
    probs["reply"] = 1.0 - p_call
    return ActionDistribution(probs, p_call)


def surprisal(logprobs: np.ndarray) -> float:
    """Mean negative log-probability per token (nats)."""
    return float(-np.mean(logprobs))


def task_readings(
    traj: Trajectory,
    site: Site,
    payloads: dict[str, ArmPayload],
    *,
    scorer: Scorer,
    system: str,
    tools: Sequence[str],
    k_max: int = 3,
    schemas: dict[str, Any] | None = None,
    prime: bool = True,
) -> list[dict[str, Any]]:
    """Rows ``{task, arm, k, s0, s1, g, entropy, leading_action, agrees_reference,
    p_reread, p_write, p_reply, ...}`` for every arm and step ``k = 0..k_max``."""
    events = traj.events
    steps = traj.step_indices()
    site_step = events[site.event]
    assert isinstance(site_step, ToolStep)
    shared = [system]
    for ev in events[: site.event]:
        shared += event_segments(ev)
    shared += call_segments(site_step)
    if prime and hasattr(scorer, "prime"):
        scorer.prime([system])
        scorer.prime(shared)
    true_payment = _first_payment_id(site_step.content)
    payment_in_prefix = true_payment is not None and any(true_payment in s for s in shared[1:])
    pending: list[tuple[dict[str, Any], ToolStep, str]] = []
    rows: list[dict[str, Any]] = []
    for arm, payload in payloads.items():
        segs = list(shared)
        prev = site.event
        for k in range(k_max + 1):
            if site.call_index + k >= len(steps):
                break
            e_i = steps[site.call_index + k]
            step = events[e_i]
            assert isinstance(step, ToolStep)
            if k > 0:
                for ev in events[prev + 1 : e_i]:
                    segs += event_segments(ev)
                segs += call_segments(step)
            content = payload.content if k == 0 else step.content
            lp1 = scorer.seq_logprobs(segs, content)
            s1 = surprisal(lp1)
            segs += [content, RET_CLOSE]
            pi = action_distribution(scorer, segs, tools)
            reference = reference_after(traj, e_i)
            row: dict[str, Any] = {
                "task": traj.task_id,
                "arm": arm,
                "k": k,
                "position": site.position + k,
                "tool": step.name,
                "s1": s1,
                # first token alone: the seed's length control for S (a per-token mean)
                "s1_first": float(-lp1[0]),
                "entropy": pi.entropy,
                "leading_action": pi.leading,
                "reference_action": reference,
                "agrees_reference": pi.leading == reference,
                "p_call": pi.p_call,
                "p_reread": pi.mass(REREAD_TOOLS),
                "p_write": pi.mass(WRITE_TOOLS),
                "p_reply": pi.probs["reply"],
                "pi": dict(pi.probs),
                "note": payload.note if k == 0 else "",
                "payment_in_prefix": payment_in_prefix,
            }
            rows.append(row)
            pending.append((row, step, content))
            prev = e_i
    s0_cache: dict[tuple[str, str, str], np.ndarray] = {}
    for row, step, content in pending:  # S0 last: short contexts, shared across arms
        key = (step.name, json.dumps(step.arguments, sort_keys=True), content)
        if key not in s0_cache:
            s0_cache[key] = scorer.seq_logprobs(
                schema_only_segments(step, schemas=schemas), content
            )
        lp0 = s0_cache[key]
        row["s0"] = surprisal(lp0)
        row["s0_first"] = float(-lp0[0])
        row["g"] = row["s1"] - row["s0"]
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

"""Trajectories, the injection site and the arms.

A trajectory is a list of events (customer text, agent text, tool steps). Replay builds
one from a task's reference actions run against the domain database; the site selector
picks the step whose return is replaced; each arm substitutes only that return, so
everything before it and every later return are the same bytes in every arm.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from toolaudit.faults._retail import ORDER_STATUSES, RetailEnvironment
from toolaudit.traces import DomainTask, Episode

ArmName = Literal["clean", "failed", "truncated", "falsified_status", "falsified_payment"]
ARMS: tuple[ArmName, ...] = (
    "clean",
    "failed",
    "truncated",
    "falsified_status",
    "falsified_payment",
)
#: The error string the environment returns when ``get_order_details`` fails.
ORDER_NOT_FOUND = "Error: Order not found"
# A deterministic status swap that changes which actions the policy permits.
_STATUS_SWAP = {
    "pending": "delivered",
    "processed": "pending",
    "delivered": "pending",
    "cancelled": "pending",
    "pending (item modified)": "delivered",
    "exchange requested": "pending",
    "return requested": "pending",
}


@dataclass(frozen=True, slots=True)
class Text:
    """A plain message: ``role`` is ``user`` (customer) or ``assistant`` (agent reply)."""

    role: Literal["user", "assistant"]
    text: str


@dataclass(frozen=True, slots=True)
class ToolStep:
    """One tool call and the return the environment gave it."""

    name: str
    arguments: dict[str, Any]
    content: str
    error: bool = False


Event = Text | ToolStep


@dataclass(frozen=True, slots=True)
class Trajectory:
    """A task's events; ``steps()`` indexes the tool steps (positions count calls)."""

    task_id: str
    events: tuple[Event, ...]

    def step_indices(self) -> list[int]:
        """Event indices of the tool steps, in order."""
        return [i for i, e in enumerate(self.events) if isinstance(e, ToolStep)]


@dataclass(frozen=True, slots=True)
class Site:
    """The injection site: ``position`` among the task's tool calls counting from one
    (the seed's "position two or later"), and ``event``, its index in the events."""

    position: int
    event: int

    @property
    def call_index(self) -> int:
        """The site's index among the tool calls, counting from zero."""
        return self.position - 1


@dataclass(frozen=True, slots=True)
class NoSite:
    """Why a trajectory has no injection site: a stable ``reason`` key and a detail."""

    reason: str
    detail: str


@dataclass(frozen=True, slots=True)
class ArmPayload:
    """The substituted return of one arm, with a note of what was changed."""

    arm: str
    content: str
    note: str = ""


class ReplayError(Exception):
    """A reference action failed when replayed (the task is skipped with the reason)."""


_PRONOUNS = [
    (r"\bYou are\b", "I am"),
    (r"\byou are\b", "I am"),
    (r"\bYou're\b", "I'm"),
    (r"\byou're\b", "I'm"),
    (r"\bYou've\b", "I've"),
    (r"\byou've\b", "I've"),
    (r"\bYou'd\b", "I'd"),
    (r"\byou'd\b", "I'd"),
    (r"\bYourself\b", "Myself"),
    (r"\byourself\b", "myself"),
    (r"\bYour\b", "My"),
    (r"\byour\b", "my"),
    (r"\bYou\b", "I"),
    (r"\byou\b", "I"),
]


def first_person(text: str) -> str:
    """Turn tau2's second-person user instructions into the customer's own words.

    Example:
        >>> first_person("You received your order #W1.")
        'I received my order #W1.'
    """
    for pattern, repl in _PRONOUNS:
        text = re.sub(pattern, repl, text)
    return text


def user_message(task: DomainTask) -> str:
    """The customer's opening message: tau2's ``known_info`` and ``reason_for_call``."""
    instr = (task.raw.get("user_scenario") or {}).get("instructions") or {}
    if isinstance(instr, str):
        return first_person(instr)
    parts = [instr.get("known_info"), instr.get("reason_for_call")]
    return first_person(" ".join(p.strip() for p in parts if isinstance(p, str) and p.strip()))


def replay(task: DomainTask, db: Mapping[str, Any]) -> Trajectory:
    """Run the task's reference actions against a copy-on-write view of ``db``."""
    env = RetailEnvironment(db)
    events: list[Event] = [Text("user", user_message(task))]
    for i, action in enumerate(task.reference_actions):
        content, error = env.call(action.name, dict(action.arguments))
        if error:
            raise ReplayError(f"reference action {i + 1} ({action.name}) failed: {content}")
        events.append(ToolStep(action.name, dict(action.arguments), content, error))
    return Trajectory(task.id, tuple(events))


def trajectory_from_episode(episode: Episode, *, task_id: str | None = None) -> Trajectory:
    """A recorded Episode as the audit's events (customer text, agent text, tool steps);
    system messages are dropped (the domain policy is rendered by the audit)."""
    results = {m.tool_call_id: m for m in episode.messages if m.role == "tool"}
    events: list[Event] = []
    for m in episode.messages:
        if m.role == "user" and m.content:
            events.append(Text("user", m.content))
        elif m.role == "assistant":
            if m.content:
                events.append(Text("assistant", m.content))
            for call in m.tool_calls or []:
                ret = results.get(call.id)
                body = (ret.content or "") if ret is not None else ""
                error = ret.error if ret is not None else True
                events.append(ToolStep(call.name, dict(call.arguments), body, error))
    return Trajectory(task_id or f"{episode.task_id}/{episode.trial}", tuple(events))


SiteSelector = Callable[[Trajectory], "Site | NoSite"]


def first_call_site(tool: str = "get_order_details", *, min_position: int = 2) -> SiteSelector:
    """The seed's site: the first call to ``tool`` at position ``min_position`` or later,
    counting calls from one, with at least one later call and a JSON-object return.
    Returns a ``Site`` or a ``NoSite`` saying why there is none."""

    def select(traj: Trajectory) -> Site | NoSite:
        idx = traj.step_indices()
        for i, ev_i in enumerate(idx):
            step = traj.events[ev_i]
            assert isinstance(step, ToolStep)
            if step.name != tool or i + 1 < min_position:
                continue
            if i + 1 >= len(idx):
                return NoSite("no_later_call", f"no call after {tool} at position {i + 1}")
            if step.error or not step.content.lstrip().startswith("{"):
                return NoSite(
                    "site_not_record", f"{tool} at position {i + 1} returned no order record"
                )
            return Site(i + 1, ev_i)
        return NoSite("no_site", f"no {tool} call at position {min_position} or later")

    return select


def _fake_payment_id(true_id: str, owned: set[str], seed: int, task_id: str) -> str:
    prefix, _, digits = true_id.rpartition("_")
    width = len(digits) if digits.isdigit() else 7
    key = hashlib.sha256(f"{seed}:{task_id}:{true_id}".encode()).hexdigest()
    rng = random.Random(int(key[:16], 16))
    while True:
        cand = f"{prefix}_{rng.randrange(10 ** (width - 1), 10**width)}"
        if cand != true_id and cand not in owned:
            return cand


def make_arms(
    content: str,
    *,
    arms: Sequence[str],
    task_id: str,
    owned_payment_ids: set[str],
    seed: int,
    truncate_fraction: float = 0.5,
) -> tuple[dict[str, ArmPayload], dict[str, str]]:
    """Build each arm's payload for one site return; returns ``(payloads, skipped)``
    where ``skipped`` maps an arm to why its target field is absent."""
    record = json.loads(content)
    out: dict[str, ArmPayload] = {}
    skipped: dict[str, str] = {}
    for arm in arms:
        if arm == "clean":
            out[arm] = ArmPayload(arm, content)
        elif arm == "failed":
            out[arm] = ArmPayload(arm, ORDER_NOT_FOUND, "environment error string")
        elif arm == "truncated":
            cut = max(1, int(len(content) * truncate_fraction))
            out[arm] = ArmPayload(arm, content[:cut], f"first {cut} of {len(content)} chars")
        elif arm == "falsified_status":
            status = record.get("status")
            if status not in ORDER_STATUSES:
                skipped[arm] = "no legal status field"
                continue
            new = dict(record, status=_STATUS_SWAP[status])
            out[arm] = ArmPayload(arm, json.dumps(new), f"status {status} -> {new['status']}")
        elif arm == "falsified_payment":
            history = record.get("payment_history") or []
            if not history or "payment_method_id" not in history[0]:
                skipped[arm] = "no payment_history"
                continue
            true_id = history[0]["payment_method_id"]
            fake = _fake_payment_id(true_id, owned_payment_ids, seed, task_id)
            new_hist = [
                dict(h, payment_method_id=fake) if h.get("payment_method_id") == true_id else h
                for h in history
            ]
            new = dict(record, payment_history=new_hist)
            out[arm] = ArmPayload(arm, json.dumps(new), f"{true_id} -> {fake}")
        else:
            from toolaudit.errors import ConfigError

            raise ConfigError.invalid("arms", ARMS, arm)
    return out, skipped


def reference_after(traj: Trajectory, event_index: int) -> str:
    """The reference action at the decision after event ``event_index``: the next tool
    name, or ``reply`` when the agent speaks next or the trajectory ends."""
    for ev in traj.events[event_index + 1 :]:
        if isinstance(ev, ToolStep):
            return ev.name
        if ev.role == "assistant":
            return "reply"
    return "reply"

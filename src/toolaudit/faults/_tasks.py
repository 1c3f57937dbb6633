"""Which tasks enter the paired set, and why each other task drops out (seed §II-C).

A task qualifies when its reference action sequence is non-empty, replays without
error, contains a site (the first ``get_order_details`` at position two or later,
counting calls from one) with a JSON record and at least one later call, and when its
clean baseline does not already contradict what the user states about that order. The
census covers every task of the source, so ``qualifying_tasks`` and the drop-out counts
add up to the number of tasks; replay is copy-on-write, so the census costs well under a
second for the 114 retail tasks.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from toolaudit.errors import TraceFormatError
from toolaudit.faults._intent import (
    Constraint,
    StatusStatement,
    contradiction,
    stated_status,
    status_constraint,
)
from toolaudit.faults._replay import (
    NoSite,
    ReplayError,
    Site,
    SiteSelector,
    ToolStep,
    Trajectory,
    first_call_site,
    replay,
    trajectory_from_episode,
)
from toolaudit.traces import Domain, DomainTask, Episode, kind_of

logger = logging.getLogger(__name__)

#: Drop-out reason keys (written to ``counts.site_dropouts``) and what each means.
DROPOUT_REASONS: dict[str, str] = {
    "no_actions": "the reference action sequence is empty",
    "replay_error": "a reference action fails when replayed against the database",
    "no_site": "no get_order_details call at position two or later",
    "no_later_call": "no call after the site",
    "site_not_record": "the site's return is not an order record",
    "intent_contradiction": "the clean baseline contradicts what the user states",
}


@dataclass(frozen=True, slots=True)
class Candidate:
    """One task of the source: its trajectory and site when it qualifies, else the
    drop-out ``reason`` key and a ``detail``. ``constraint`` is how a falsified status
    could be contradicted (see ``toolaudit.faults._intent``)."""

    task_id: str
    trajectory: Trajectory | None = None
    site: Site | None = None
    reason: str | None = None
    detail: str = ""
    constraint: Constraint = "none"

    @property
    def qualifies(self) -> bool:
        """Whether the task enters the paired set."""
        return self.reason is None


def _later_calls(traj: Trajectory, site: Site) -> list[tuple[str, Any]]:
    steps = [traj.events[i] for i in traj.step_indices()[site.position :]]
    return [(s.name, s.arguments) for s in steps if isinstance(s, ToolStep)]


def judge(
    task_id: str,
    traj: Trajectory,
    instructions: str | None,
    selector: SiteSelector,
    *,
    source: str = "the domain",
) -> Candidate:
    """The site rule and the intent control on one trajectory. ``instructions`` is the
    user's stated intent (``None`` when unknown: the control is then not applied).
    A site record whose fields the arms rewrite have the wrong type is refused naming
    ``source``, the task and the field (before any model is loaded)."""
    found = selector(traj)
    if isinstance(found, NoSite):
        return Candidate(task_id, reason=found.reason, detail=found.detail)
    step = traj.events[found.event]
    assert isinstance(step, ToolStep)
    where = f"task {task_id}, {step.name} return"
    try:
        record = json.loads(step.content)
    except RecursionError:
        raise TraceFormatError(source, None, where, "JSON nested too deeply") from None
    if not isinstance(record, dict):
        return Candidate(task_id, reason="site_not_record", detail="the return is not an object")
    check_site_record(record, source=source, where=where)
    statement = stated_status(instructions, record) if instructions else StatusStatement(None)
    why = contradiction(statement, record)
    if why is not None:
        return Candidate(task_id, reason="intent_contradiction", detail=why)
    constraint = status_constraint(statement, record, _later_calls(traj, found))
    return Candidate(task_id, traj, found, constraint=constraint)


def check_site_record(record: dict[str, Any], *, source: str, where: str) -> None:
    """The fields of a site record that the arms read or rewrite (``status``,
    ``user_id``, ``payment_history[].payment_method_id``): strings where present."""

    def bad(field: str, value: Any) -> TraceFormatError:
        return TraceFormatError(
            source, None, f"{where}.{field}", f"expected a string, got {kind_of(value)}"
        )

    for key in ("status", "user_id"):
        if key in record and record[key] is not None and not isinstance(record[key], str):
            raise bad(key, record[key])
    history = record.get("payment_history")
    if isinstance(history, list):
        for i, h in enumerate(history):
            pid = h.get("payment_method_id") if isinstance(h, dict) else None
            if pid is not None and not isinstance(pid, str):
                raise bad(f"payment_history[{i}].payment_method_id", pid)


def task_intent(task: DomainTask) -> str:
    """The user's stated intent: tau2's ``reason_for_call`` (else all instructions)."""
    instr = (task.raw.get("user_scenario") or {}).get("instructions") or {}
    if isinstance(instr, dict) and isinstance(instr.get("reason_for_call"), str):
        return str(instr["reason_for_call"])
    return task.instructions


def domain_census(domain: Domain, *, selector: SiteSelector | None = None) -> list[Candidate]:
    """Every task of a domain, replayed from its reference actions and judged."""
    selector = selector or first_call_site()
    out = []
    for task in domain.tasks:
        if not task.reference_actions:
            out.append(Candidate(task.id, reason="no_actions", detail="no reference actions"))
            continue
        try:
            traj = replay(task, domain.db)
        except ReplayError as exc:
            out.append(Candidate(task.id, reason="replay_error", detail=str(exc)))
            continue
        out.append(judge(task.id, traj, task_intent(task), selector))
    return out


def episode_census(
    episodes: Iterable[Episode],
    *,
    domain: Domain | None,
    selector: SiteSelector | None = None,
    source: str = "the source",
) -> list[Candidate]:
    """Recorded trajectories (ids ``task/trial``), judged the same way. The intent
    control uses the domain's task of the same id, only for tau2 results of that domain
    (tau-bench task ids number another task list)."""
    selector = selector or first_call_site()
    intents = {t.id: task_intent(t) for t in domain.tasks} if domain is not None else {}
    out = []
    seen: dict[str, int] = {}
    for n, ep in enumerate(episodes, start=1):
        traj = trajectory_from_episode(ep)
        first = seen.setdefault(traj.task_id, n)
        if first != n:  # the same run twice would be counted, and weigh, twice
            raise TraceFormatError(
                source, None, f"run {traj.task_id}",
                f"the run of task {ep.task_id!r}, trial {ep.trial} appears twice (runs "
                f"{first} and {n} of the file); each run must appear once",
            )  # fmt: skip
        if not traj.step_indices():
            out.append(Candidate(traj.task_id, reason="no_actions", detail="no tool calls"))
            continue
        same = (
            domain is not None
            and ep.source.get("format") == "tau2"
            and ep.source.get("domain") == domain.name
        )
        intent = intents.get(ep.task_id) if same else None
        out.append(judge(traj.task_id, traj, intent, selector, source=source))
    return out


def dropout_counts(candidates: Sequence[Candidate]) -> dict[str, int]:
    """Reason key -> number of tasks that drop out for it (keys in a fixed order)."""
    counts = {key: 0 for key in DROPOUT_REASONS}
    for c in candidates:
        if c.reason is not None:
            counts[c.reason] += 1
    return {k: v for k, v in counts.items() if v}

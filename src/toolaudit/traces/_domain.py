"""A tau2-bench domain folder (``tau2/domains/<name>/``): tasks with reference actions,
the database, the agent policy and the task splits.

Files: ``tasks.json`` (list of tasks; ``evaluation_criteria.actions`` are the reference
tool calls), ``db.json`` (the environment's database), ``policy.md`` (the agent policy)
and optionally ``split_tasks.json`` (``{split: [task ids]}``).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolaudit.errors import TraceFormatError
from toolaudit.traces._schema import ToolCall
from toolaudit.traces._source import field as get_field
from toolaudit.traces._source import read_json_document

logger = logging.getLogger(__name__)

FORMAT = "tau2-domain"
TASKS_FILE = "tasks.json"


@dataclass(frozen=True, slots=True)
class ReferenceAction:
    """One reference tool call of a task: ``name`` and ``arguments`` (plus tau2's id)."""

    name: str
    arguments: Mapping[str, Any]
    action_id: str | None = None

    def as_tool_call(self) -> ToolCall:
        """The same call as an Episode ``ToolCall`` (id = the action id, or the name)."""
        return ToolCall(
            id=self.action_id or self.name, name=self.name, arguments=dict(self.arguments)
        )


@dataclass(frozen=True, slots=True)
class DomainTask:
    """One task: its id, the simulated user's instructions and the reference actions."""

    id: str
    instructions: str
    reference_actions: tuple[ReferenceAction, ...]
    nl_assertions: tuple[str, ...] = ()
    communicate_info: tuple[str, ...] = ()
    reward_basis: tuple[str, ...] = ()
    raw: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class Domain:
    """A loaded tau2 domain. ``db`` is the parsed database (e.g. retail: ``products``,
    ``users``, ``orders``); ``splits`` maps a split name to task ids."""

    name: str
    policy: str
    tasks: tuple[DomainTask, ...]
    db: Mapping[str, Any] = field(compare=False, repr=False)
    splits: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    path: str = ""

    def task(self, task_id: str) -> DomainTask:
        """The task with this id (KeyError if absent)."""
        for t in self.tasks:
            if t.id == task_id:
                return t
        raise KeyError(task_id)

    def split(self, name: str) -> tuple[DomainTask, ...]:
        """The tasks of one split, in split order (KeyError for an unknown split)."""
        by_id = {t.id: t for t in self.tasks}
        return tuple(by_id[i] for i in self.splits[name] if i in by_id)

    def n_reference_actions(self) -> int:
        """Total number of reference actions over all tasks."""
        return sum(len(t.reference_actions) for t in self.tasks)


def is_domain_dir(path: str | Path) -> bool:
    """Whether ``path`` is a folder holding a tau2 ``tasks.json``."""
    p = Path(path)
    return p.is_dir() and (p / TASKS_FILE).is_file()


def load_domain(path: str | Path) -> Domain:
    """Load a tau2 domain folder.

    Example:
        >>> d = load_domain("../shared/data/tau2/domains/retail")  # doctest: +SKIP
        >>> d.tasks[0].reference_actions[0].name  # doctest: +SKIP
        'find_user_id_by_name_zip'
    """
    root = Path(path)
    tasks_path = root / TASKS_FILE
    if not tasks_path.is_file():
        raise TraceFormatError(root, None, TASKS_FILE, "not a tau2 domain folder (no tasks.json)")
    raw_tasks = read_json_document(tasks_path)
    if not isinstance(raw_tasks, list):
        raise TraceFormatError(tasks_path, None, "<record>", "expected a JSON list of tasks")
    tasks = tuple(_task(t, where=f"[{i}]", path=tasks_path) for i, t in enumerate(raw_tasks))
    policy_path = root / "policy.md"
    policy = policy_path.read_text(encoding="utf-8") if policy_path.is_file() else ""
    db_path = root / "db.json"
    db = read_json_document(db_path) if db_path.is_file() else {}
    if not isinstance(db, dict):
        raise TraceFormatError(db_path, None, "<record>", "expected a JSON object")
    name = _domain_name(raw_tasks) or root.name
    logger.debug("loaded domain %s: %d tasks", name, len(tasks))
    return Domain(
        name=name,
        policy=policy,
        tasks=tasks,
        db=db,
        splits=_splits(root / "split_tasks.json"),
        path=str(root),
    )


def _domain_name(raw_tasks: list[Any]) -> str | None:
    for t in raw_tasks:
        scenario = t.get("user_scenario") if isinstance(t, dict) else None
        instr = scenario.get("instructions") if isinstance(scenario, dict) else None
        if isinstance(instr, dict) and isinstance(instr.get("domain"), str):
            return str(instr["domain"])
    return None


def _task(raw: Any, *, where: str, path: Path) -> DomainTask:
    task_id = get_field(raw, "id", path=path, where=where, kind=(str, int))
    criteria = get_field(raw, "evaluation_criteria", path=path, where=where, kind=dict, default={})
    at = f"{where}.evaluation_criteria"
    actions = get_field(criteria, "actions", path=path, where=at, kind=list, default=[])
    refs = []
    for k, act in enumerate(actions):
        a_at = f"{at}.actions[{k}]"
        refs.append(
            ReferenceAction(
                name=get_field(act, "name", path=path, where=a_at, kind=str),
                arguments=get_field(act, "arguments", path=path, where=a_at, kind=dict, default={}),
                action_id=act.get("action_id"),
            )
        )

    def strings(key: str) -> tuple[str, ...]:
        values = get_field(criteria, key, path=path, where=at, kind=list, default=[])
        return tuple(str(x) for x in values)

    return DomainTask(
        id=str(task_id),
        instructions=_instructions(raw.get("user_scenario")),
        reference_actions=tuple(refs),
        nl_assertions=strings("nl_assertions"),
        communicate_info=strings("communicate_info"),
        reward_basis=strings("reward_basis"),
        raw=raw,
    )


def _instructions(scenario: Any) -> str:
    # tau2 stores instructions either as one string or as labelled parts.
    if not isinstance(scenario, dict):
        return ""
    instr = scenario.get("instructions")
    if isinstance(instr, str):
        return instr
    if isinstance(instr, dict):
        keys = ("reason_for_call", "known_info", "unknown_info", "task_instructions")
        return "\n".join(str(instr[k]) for k in keys if instr.get(k))
    return ""


def _splits(path: Path) -> dict[str, tuple[str, ...]]:
    if not path.is_file():
        return {}
    doc = read_json_document(path)
    if not isinstance(doc, dict):
        raise TraceFormatError(path, None, "<record>", "expected {split: [task ids]}")
    return {str(k): tuple(str(x) for x in v) for k, v in doc.items() if isinstance(v, list)}

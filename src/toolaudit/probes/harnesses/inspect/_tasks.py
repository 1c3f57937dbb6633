"""Which Inspect task a study names: a tau2 task of inspect_evals or a generic Inspect
task (checked without running it), the task's key in a run's configuration, its label in
a record's task id, and the refusals that go with them. Imports Inspect only when asked.
"""

from __future__ import annotations

from pathlib import Path

from toolaudit.errors import ConfigError, MissingDependencyError


def require_inspect() -> None:
    """Refuse, with the install line, when the ``[inspect]`` extra is missing."""
    try:
        import inspect_ai  # noqa: F401
        import inspect_evals  # noqa: F401
    except ModuleNotFoundError:
        raise MissingDependencyError("inspect-ai inspect-evals", "inspect") from None


def check_task(task: str) -> str | None:
    """The tau2 domain of a tau2 task name, None for a generic Inspect task (a file spec
    whose file exists, or a name Inspect's registry knows), a ConfigError otherwise. The
    generic task is loaded later (:class:`~toolaudit.probes.harnesses.inspect._generic.GenericDomain`).
    """
    from toolaudit.probes.harnesses.inspect._generic import generic_task_problem
    from toolaudit.probes.harnesses.inspect._tau2 import TAU2_TASKS

    if task in TAU2_TASKS:
        return TAU2_TASKS[task]
    problem = generic_task_problem(task)
    if problem is not None:
        allowed = ", ".join(TAU2_TASKS) + ", FILE.py@NAME or an Inspect registry name"
        raise ConfigError(f"invalid task={task!r} ({problem}); allowed: {allowed}")
    return None


def is_tau2(task: str) -> bool:
    """Whether ``task`` is one of inspect_evals' tau2 tasks (no Inspect import)."""
    from toolaudit.probes.harnesses.inspect._tau2 import TAU2_TASKS

    return task in TAU2_TASKS


def task_key(task: str) -> str:
    """The task as a run's configuration (and so its hash and sampling seed) names it: a
    ``FILE.py@NAME`` task by its file's name, so the same file named from another working
    folder (``tasks.py`` or ``/abs/tasks.py``) gives the same runs (the file's path and
    SHA-256 are checked through ``run_config.json``); a registry name as given.

    >>> task_key("../x/tasks.py@weather"), task_key("inspect_evals/tau2_retail")
    ('tasks.py@weather', 'inspect_evals/tau2_retail')
    """
    head, at, name = task.rpartition("@")
    if at and head.endswith(".py"):
        return f"{Path(head).name}@{name}"
    return Path(task).name if task.endswith(".py") else task


def task_label(task: str) -> str:
    """``tau2_retail`` of ``inspect_evals/tau2_retail``, ``name`` of ``dir/file.py@name``."""
    return task.rsplit("@", 1)[-1] if "@" in task else task.rsplit("/", 1)[-1]


def generic_policy_error(policy: str) -> ConfigError:
    """The refusal of a tau2-only policy on a generic task."""
    return ConfigError(
        f"policy {policy!r} needs the reference actions only tau2 tasks have; a generic "
        "Inspect task runs 'llm' (with --model) and 'inert'"
    )

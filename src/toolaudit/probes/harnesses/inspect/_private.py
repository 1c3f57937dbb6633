"""Inspect AI's private API, in one place.

toolaudit uses Inspect's public API (``eval``, ``score``, ``ToolDef``, the log readers and
writers, ``get_model``) wherever one exists. Three things have no public form in
inspect-ai 0.3.285 (the version ``pyproject.toml`` pins for the ``[inspect]`` extra): looking
a name up in Inspect's registry without creating the object, loading a task spec without
running it, and flattening a solver chain into its steps. They are called here and
nowhere else, so an upgrade that moves them fails in this one module (and its test,
``tests/probes/test_inspect_private.py``, which names the pinned version).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

#: The inspect-ai version these calls were written against (the ``[inspect]`` extra's pin).
INSPECT_AI_VERSION = "0.3.285"


def registry_lookup(kind: Literal["task", "scorer"], name: str) -> Any:
    """The object registered under ``name`` as a ``kind``, or None (nothing is created)."""
    from inspect_ai._util.registry import registry_lookup as lookup

    return lookup(kind, name)


def load_tasks(specs: Sequence[str]) -> list[Any]:
    """The Inspect ``Task`` objects that task specs name, as ``inspect eval`` loads them."""
    from inspect_ai._eval.loader import load_tasks as load

    return list(load(list(specs)))


def unroll(solver: Any) -> list[Any]:
    """A solver's steps: a chain flattened into the solvers it runs, one solver as itself."""
    from inspect_ai.solver._chain import unroll as flatten

    return list(flatten(solver))

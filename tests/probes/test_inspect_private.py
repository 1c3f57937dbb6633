"""Inspect AI's private API is called from one module, written against one pinned
version (issue 53): an upgrade of inspect-ai fails here first, by name."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

pytest.importorskip("inspect_ai")

from toolaudit.probes.harnesses.inspect import _private  # noqa: E402

SRC = Path(__file__).resolve().parents[2] / "src"


def test_the_pinned_inspect_ai_is_the_installed_one() -> None:
    from importlib.metadata import version

    pyproject = (SRC.parent / "pyproject.toml").read_text(encoding="utf-8")
    assert f'"inspect-ai=={_private.INSPECT_AI_VERSION}"' in pyproject
    assert version("inspect-ai") == _private.INSPECT_AI_VERSION, (
        "inspect-ai changed: check the private calls in "
        "toolaudit/probes/harnesses/inspect/_private.py, then move INSPECT_AI_VERSION"
    )


def test_no_other_module_reaches_into_inspect_private_api() -> None:
    private = re.compile(r"\binspect_ai(\.\w+)*\._\w+")
    found = [
        f"{p.relative_to(SRC)}:{n}"
        for p in sorted(SRC.rglob("*.py"))
        if p.name != "_private.py"
        for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), start=1)
        if private.search(line)
    ]
    assert found == []


def test_private_calls_still_do_what_the_harness_needs(tmp_path: Path) -> None:
    from inspect_ai.solver import chain, generate, system_message

    assert _private.registry_lookup("task", "no_such/task_anywhere") is None
    file = tmp_path / "one_task.py"
    file.write_text(
        "from inspect_ai import Task, task\n"
        "from inspect_ai.dataset import Sample\n\n"
        "@task\ndef private_api_probe():\n"
        "    return Task(dataset=[Sample(input='hi', target='x')])\n"
    )
    tasks = _private.load_tasks([f"{file}@private_api_probe"])
    assert [t.name for t in tasks] == ["private_api_probe"]
    steps = _private.unroll(chain(system_message("s"), generate()))
    assert len(steps) == 2

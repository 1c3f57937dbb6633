"""Every docstring example in ``src/toolaudit`` runs in the default test command (examples
that need a model or data are marked ``# doctest: +SKIP`` where they stand)."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import toolaudit


def _modules() -> list[str]:
    return sorted(m.name for m in pkgutil.walk_packages(toolaudit.__path__, prefix="toolaudit."))


def _has_examples(name: str) -> bool:
    module = importlib.import_module(name)
    return any(t.examples for t in doctest.DocTestFinder(exclude_empty=True).find(module))


MODULES = [name for name in _modules() if _has_examples(name)]


def test_doctests_are_collected_from_the_packages() -> None:
    assert {
        "toolaudit.stats._auroc",
        "toolaudit.tokens._classes",
        "toolaudit.audits._contract",
    } <= set(MODULES)


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_run(name: str) -> None:
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples failed in {name}"

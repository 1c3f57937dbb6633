"""The public surface of toolaudit.probes is what __all__ says, and it is documented."""

from __future__ import annotations

import toolaudit.probes as probes


def test_all_names_resolve_and_have_docstrings() -> None:
    for name in probes.__all__:
        obj = getattr(probes, name)
        if callable(obj) and not isinstance(obj, dict):
            assert obj.__doc__, name


def test_demo_hook_is_exported() -> None:
    assert "demo_sections" in probes.__all__
    assert callable(probes.demo_sections)

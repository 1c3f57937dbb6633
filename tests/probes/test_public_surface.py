"""The public surface of toolaudit.probes is what __all__ says, and it is documented."""

from __future__ import annotations

import toolaudit.probes as probes


def test_all_names_resolve_and_have_docstrings() -> None:
    for name in probes.__all__:
        obj = getattr(probes, name)
        if callable(obj) and not isinstance(obj, dict):
            assert obj.__doc__, name

"""The demo's reduced settings, made visible: each setting a demo configuration sets below
its audit's own default becomes a ``relaxed_parameter`` fallback in the results'
``meta.fallbacks`` (and so a note in the report), never a silent change."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from toolaudit.report import Fallback

DEMO_BUDGET = "to keep `toolaudit demo` within its 10-minute budget on 2 cores"


def relaxed_settings(
    audit: str, settings: Mapping[str, tuple[Any, Any]], *, reason: str = DEMO_BUDGET
) -> tuple[Fallback, ...]:
    """One ``relaxed_parameter`` fallback per setting whose demo value differs from the
    audit's default.

    Args:
        audit: the audit's registry name (the fallback's component is ``audit.setting``).
        settings: setting name -> (demo value, the audit's default value).
        reason: why the demo departs from the default (ends the sentence).

    >>> [f.what for f in relaxed_settings("leakage", {"n_boot": (300, 2000), "seed": (0, 0)})]
    ['leakage.n_boot']
    >>> relaxed_settings("leakage", {"n_boot": (300, 2000)})[0].detail
    "the demo uses n_boot = 300 instead of the audit's default, 2000, to keep `toolaudit demo` within its 10-minute budget on 2 cores"
    """
    return tuple(
        Fallback(
            kind="relaxed_parameter",
            what=f"{audit}.{name}",
            detail=f"the demo uses {name} = {_shown(demo)} instead of the audit's default, "
            f"{_shown(default)}, {reason}",
        )
        for name, (demo, default) in settings.items()
        if demo != default
    )


def _shown(value: Any) -> str:
    if isinstance(value, list | tuple):
        return "(" + ", ".join(_shown(v) for v in value) + ")"
    if value is None:
        return "all of them"
    return str(value)

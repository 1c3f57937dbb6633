"""Inspect tools as a model sees them under a tool mutation, shared by the tau2 and the
generic Inspect harness: new tools with the shown names, the task's descriptions,
parameter schemas and functions, text returns re-presented under ``reformat`` (and
recorded for the map-back)."""

from __future__ import annotations

import functools
import inspect as pyinspect
from collections.abc import Callable, Sequence
from typing import Any

from toolaudit.probes._mutations import ToolMutation, reformat_text


def _calling(fn: Callable[..., Any], memo: dict[str, str] | None) -> Callable[..., Any]:
    """A new function object running ``fn`` (``memo``: its text returns reformatted, and
    recorded for map-back). ``ToolDef.as_tool`` tags the function it is given with the
    shown name, so the task's own tool must never be that function."""

    @functools.wraps(fn)
    async def execute(*args: Any, **kwargs: Any) -> Any:
        result = fn(*args, **kwargs)
        if pyinspect.isawaitable(result):
            result = await result
        if memo is not None and isinstance(result, str):
            shown = reformat_text(result)
            if shown != result:
                memo[shown] = result
            return shown
        return result

    return execute


def shown_tools(tools: Sequence[Any], mutation: ToolMutation, memo: dict[str, str]) -> list[Any]:
    """``tools`` as the model sees them under ``mutation``: new tools with the shown names,
    the same descriptions, parameter schemas and functions (returns re-presented under
    ``reformat``); the task's own tools are left untouched."""
    from inspect_ai.tool import ToolDef

    shown = mutation.shown_of()
    reformat = memo if mutation.obs_format == "wrapped_reversed" else None
    out = []
    for t in tools:
        d = ToolDef(t)
        out.append(
            ToolDef(
                _calling(d.tool, reformat),
                name=shown.get(d.name, d.name),
                description=d.description,
                parameters=d.parameters,
                parallel=d.parallel,
                viewer=d.viewer,
            ).as_tool()
        )
    return out

"""The command that opens a trace's source in its own viewer (``tau2 view``,
``inspect view``), so a finding's task ids lead straight to the transcripts."""

from __future__ import annotations

import shlex
from collections.abc import Iterable
from pathlib import Path
from typing import Any


def view_command(source: dict[str, Any]) -> str | None:
    """``tau2 view --file F`` for a tau2-bench results file, ``tau2 view --dir D`` for a
    results folder, ``inspect view --log-dir D`` for an Inspect AI log (its folder);
    ``None`` for formats without a viewer.

    Example:
        >>> view_command({"format": "tau2", "file": "sims/retail gpt.json"})
        "tau2 view --file 'sims/retail gpt.json'"
        >>> view_command({"format": "inspect", "file": "logs/x.eval"})
        'inspect view --log-dir logs'
    """
    fmt, file = source.get("format"), source.get("file")
    if not file:
        return None
    if fmt == "tau2":
        return f"tau2 view --file {shlex.quote(str(file))}"
    if fmt == "tau2-dir":
        return f"tau2 view --dir {shlex.quote(str(file))}"
    if fmt == "inspect":
        return f"inspect view --log-dir {shlex.quote(str(Path(file).parent))}"
    return None


def view_commands(paths: Iterable[str | Path]) -> list[str]:
    """The distinct viewer commands for input files, in order (files whose format has no
    viewer, or is not recognised, give none)."""
    from toolaudit.errors import TraceFormatError
    from toolaudit.traces._formats import detect_format

    out: list[str] = []
    for path in paths:
        try:
            fmt = detect_format(path)
        except TraceFormatError:
            continue
        cmd = view_command({"format": fmt, "file": str(path)})
        if cmd is not None and cmd not in out:
            out.append(cmd)
    return out

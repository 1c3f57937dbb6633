"""Helpers shared by the subcommands: JSON output, progress, the data root."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from toolaudit.report import clean_json as _clean

ProgressCallback = Callable[[int, int, str], None]


def print_json(obj: Any) -> None:
    """Print a result as JSON on stdout (NaN written as null)."""
    sys.stdout.write(json.dumps(_clean(obj), indent=2, sort_keys=True) + "\n")


def add_parser(
    sub: Any, name: str, *, help: str, example: str, description: str | None = None
) -> argparse.ArgumentParser:
    """Add a subcommand whose --help ends with a worked example."""
    return sub.add_parser(
        name,
        help=help,
        description=description or help,
        epilog=f"Example:\n  {example}",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )


@contextmanager
def progress(description: str, *, enabled: bool = True) -> Iterator[ProgressCallback]:
    """A progress callback ``cb(done, total, label)`` rendered with rich on stderr."""
    if not enabled or not sys.stderr.isatty() and os.environ.get("TOOLAUDIT_PROGRESS") != "1":
        yield lambda done, total, label: None
        return
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        TextColumn("{task.completed}/{task.total}"),
        TimeElapsedColumn(),
        transient=True,
    ) as bar:
        task = bar.add_task(description, total=None)

        def cb(done: int, total: int, label: str) -> None:
            bar.update(task, completed=done, total=total, description=f"{description} {label}")

        yield cb


def default_data_root() -> Path | None:
    """Where the public tau2-bench / tau-bench files are: ``$TAU2_DATA_DIR``, else a
    ``shared/data`` folder beside the current directory or beside this checkout."""
    env = os.environ.get("TAU2_DATA_DIR")
    if env:
        return Path(env)
    candidates = [
        Path.cwd() / ".." / "shared" / "data",
        Path(__file__).resolve().parents[4] / "shared" / "data",
    ]
    for cand in candidates:
        if (cand / "tau2").is_dir() or (cand / "tau-bench").is_dir():
            return cand.resolve()
    return None


def add_data_root(parser: argparse.ArgumentParser) -> None:
    """The ``--data-root`` option (tau2-bench's data/ layout)."""
    parser.add_argument(
        "--data-root",
        type=Path,
        default=None,
        help="folder laid out like tau2-bench's data/ (tau2/domains, tau2/simulations, "
        "tau-bench/); default $TAU2_DATA_DIR, else ../shared/data when it exists",
    )

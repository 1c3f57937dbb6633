"""Small option validators shared by the subcommands.

Each validator is an ``argparse`` ``type=`` callable: it turns the text of an option into
its value or raises :class:`argparse.ArgumentTypeError` with the uniform message (the
allowed values and the value received); argparse adds the parameter's name, and the
parser prints it as one line with exit code 2. Checking at parse time means a bad option
is refused before anything is read or written.

Example:
    >>> positive_int("3")
    3
    >>> finite_float(low=0.0, high=1.0)("0.25")
    0.25
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable
from pathlib import Path

__all__ = [
    "existing_file",
    "finite_float",
    "int_at_least",
    "nonnegative_int",
    "output_dir",
    "output_file",
    "positive_int",
    "resolved_path",
    "seed",
]


def _invalid(allowed: str, got: str) -> argparse.ArgumentTypeError:
    return argparse.ArgumentTypeError(f"invalid value {got!r}; allowed: {allowed}")


def int_at_least(low: int) -> Callable[[str], int]:
    """A validator for a whole number ``>= low`` (``"3"`` → ``3``)."""
    allowed = f"an integer >= {low}"

    def parse(text: str) -> int:
        try:
            value = int(text)
        except (TypeError, ValueError):
            raise _invalid(allowed, text) from None
        if value < low:
            raise _invalid(allowed, text)
        return value

    parse.__name__ = f"int_at_least_{low}"
    return parse


positive_int = int_at_least(1)
"""A whole number >= 1 (counts, replicates, batch sizes, workers)."""

nonnegative_int = int_at_least(0)
"""A whole number >= 0."""


def comma_separated(text: str) -> str:
    """The type of an option that takes a comma-separated list (``--policies a,b``): the
    text as given (the command splits it), marked so that a ``--config`` replay joins a
    recorded list with commas.

    >>> comma_separated("careful,inert")
    'careful,inert'
    """
    return text


def seed(text: str) -> int:
    """A random seed: a whole number in ``[0, 2**32 - 1]`` (what numpy accepts)."""
    allowed = "an integer in [0, 4294967295]"
    try:
        value = int(text)
    except (TypeError, ValueError):
        raise _invalid(allowed, text) from None
    if not 0 <= value <= 2**32 - 1:
        raise _invalid(allowed, text)
    return value


def finite_float(
    *,
    low: float | None = None,
    high: float | None = None,
    low_open: bool = False,
    high_open: bool = False,
) -> Callable[[str], float]:
    """A validator for a finite number in a range; NaN and infinities are refused.

    ``low_open``/``high_open`` exclude the bound itself: ``finite_float(low=0,
    low_open=True)`` accepts positive numbers only.
    """
    lo = "(" if low_open else "["
    hi = ")" if high_open else "]"
    if low is None and high is None:
        allowed = "a finite number"
    else:
        allowed = (
            f"a finite number in {lo}{'-inf' if low is None else f'{low:g}'}, "
            f"{'inf' if high is None else f'{high:g}'}{hi}"
        )

    def parse(text: str) -> float:
        try:
            value = float(text)
        except (TypeError, ValueError):
            raise _invalid(allowed, text) from None
        if not math.isfinite(value):
            raise _invalid(allowed, text)
        if low is not None and (value < low or (low_open and value == low)):
            raise _invalid(allowed, text)
        if high is not None and (value > high or (high_open and value == high)):
            raise _invalid(allowed, text)
        return value

    parse.__name__ = "finite_float"
    return parse


def _blocking_ancestor(path: Path) -> Path | None:
    """The first existing ancestor of ``path`` that is not a folder, if any."""
    for parent in reversed(path.parents):
        if parent.exists() and not parent.is_dir():
            return parent
    return None


def _unwritable(folder: Path) -> str | None:
    """Why nothing can be created in the existing ``folder`` (``None`` when something
    can): a real probe (a temporary folder made and removed), since permission bits do
    not tell a read-only file system or a virtual one such as /proc."""
    import tempfile

    try:
        Path(tempfile.mkdtemp(prefix=".toolaudit-probe-", dir=folder)).rmdir()
    except OSError as exc:
        return exc.strerror or type(exc).__name__
    return None


def _writable_ancestor_check(text: str, path: Path) -> None:
    existing = next((p for p in (path, *path.parents) if p.exists()), Path("."))
    why = _unwritable(existing)
    if why is not None:
        raise argparse.ArgumentTypeError(
            f"invalid value {text!r}; allowed: a folder this user can write, but nothing can "
            f"be created in {str(existing)!r} ({why})"
        )


def output_dir(text: str) -> Path:
    """An output folder: an existing folder, or a path that can be created as one
    (missing parents are created later); refused when it, or a parent, is a file, or
    when nothing can be written there (checked before any work is done)."""
    path = Path(text)
    if path.exists() and not path.is_dir():
        raise argparse.ArgumentTypeError(
            f"invalid value {text!r}; allowed: a folder (or a new path), but this is a file"
        )
    blocker = _blocking_ancestor(path)
    if blocker is not None:
        raise argparse.ArgumentTypeError(
            f"invalid value {text!r}; allowed: a folder (or a new path), but {str(blocker)!r} "
            "is a file"
        )
    _writable_ancestor_check(text, path)
    return path


def output_file(text: str) -> Path:
    """An output file: a path whose parent folder exists; refused when it is a folder."""
    path = Path(text)
    if path.is_dir():
        raise argparse.ArgumentTypeError(
            f"invalid value {text!r}; allowed: a file path, but this is a folder"
        )
    parent = path.parent
    if not parent.is_dir():
        why = "is a file" if parent.exists() else "does not exist"
        raise argparse.ArgumentTypeError(
            f"invalid value {text!r}; allowed: a file in an existing folder, but "
            f"{str(parent)!r} {why}"
        )
    _writable_ancestor_check(text, parent)
    return path


def existing_file(text: str) -> Path:
    """An input file that exists and is a regular file (not a folder)."""
    path = Path(text)
    if path.is_dir():
        raise argparse.ArgumentTypeError(f"invalid value {text!r}; allowed: a file, not a folder")
    if not path.exists():
        raise argparse.ArgumentTypeError(f"invalid value {text!r}; allowed: an existing file")
    return path


def resolved_path(path: str | Path, option: str) -> Path:
    """``Path(path).resolve()``; a symbolic link loop (Python 3.11 raises RuntimeError for
    it) or a NUL byte is a ConfigError naming ``option`` and the path, not a crash."""
    from toolaudit.errors import ConfigError
    from toolaudit.report import visible

    try:
        return Path(path).resolve()
    except (OSError, RuntimeError, ValueError):
        problem = "a NUL byte in the path" if "\0" in str(path) else "a symbolic link loop"
        raise ConfigError(f"{option} {visible(str(path))}: {problem}") from None

"""The ``toolaudit`` command: a thin layer over the library's audit functions.

Each subcommand lives in its own module with a ``register(subparsers)`` function; the
table below is the whole dispatch. Bad options and errors that toolaudit raises on
purpose are printed as one line (no traceback) with exit code 2; any other exception is
one line with exit code 1 and a pointer to ``-v``, which logs the traceback.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import sys
from collections.abc import Sequence
from typing import NoReturn

from toolaudit import __version__
from toolaudit.errors import ToolAuditError
from toolaudit.report._document import visible

# Subcommand name -> module that registers it. Modules import heavy dependencies lazily.
COMMANDS: dict[str, str] = {
    "traces": "toolaudit.cli._traces",
    "datasets": "toolaudit.cli._datasets",
    "leakage": "toolaudit.cli._leakage",
    "redact": "toolaudit.cli._redact",
    "models": "toolaudit.cli._models",
    "probe": "toolaudit.cli._probe",
    "faults": "toolaudit.cli._faults",
    "demo": "toolaudit.cli._demo",
}


class _Parser(argparse.ArgumentParser):
    """An argument parser whose usage errors are one line on stderr (exit 2), like
    every other bad input; subcommand parsers inherit the class."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see --help)\n")


def build_parser() -> argparse.ArgumentParser:
    """The full argument parser with every available subcommand."""
    parser = _Parser(
        prog="toolaudit",
        description="Audit evaluations of tool-using LLM systems.",
        epilog="Example: toolaudit demo --out demo-out",
    )
    parser.add_argument("--version", action="version", version=f"toolaudit {__version__}")
    parser.add_argument("-v", "--verbose", action="store_true", help="log debug messages")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for module_name in COMMANDS.values():
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name == module_name:  # subcommand not part of this build
                continue
            raise
        module.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the console script; returns the exit code."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help, --version, or a usage error already printed
        return int(exc.code or 0) if not isinstance(exc.code, str) else 2
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.WARNING,
        format="%(levelname)s %(name)s: %(message)s",
    )
    for handler in logging.getLogger().handlers:
        if type(handler) is logging.StreamHandler:  # the console handler basicConfig made
            handler.setFormatter(_VisibleFormatter("%(levelname)s %(name)s: %(message)s"))
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except ToolAuditError as exc:
        print(f"toolaudit: error: {visible(str(exc))}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("toolaudit: interrupted; finished work is kept and a rerun resumes", file=sys.stderr)
        return 130
    except Exception as exc:  # the last line of defence: never a bare traceback
        logging.getLogger("toolaudit").debug("unexpected error", exc_info=True)
        print(f"toolaudit: internal error: {_one_line(exc)}{_HINT}", file=sys.stderr)
        return 1


class _VisibleFormatter(logging.Formatter):
    """Log lines with control characters made visible: a warning may quote a trace."""

    def format(self, record: logging.LogRecord) -> str:
        return visible(super().format(record), keep="\n")


_HINT = " (a bug: rerun with -v for the traceback)"


def _one_line(exc: BaseException) -> str:
    """``Type: message`` on one line (newlines and control characters made visible)."""
    text = visible(" ".join(str(exc).split()) or "(no message)")
    return f"{type(exc).__name__}: {text}"[:500]


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

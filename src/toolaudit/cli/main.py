"""The ``toolaudit`` command: a thin layer over the library's audit functions.

Each subcommand lives in its own module with a ``register(subparsers)`` function; the
table below is the whole dispatch. Errors that toolaudit raises on purpose are printed
as one line (no traceback) with exit code 2.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import sys
from collections.abc import Sequence

from toolaudit import __version__
from toolaudit.errors import ToolAuditError

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


def build_parser() -> argparse.ArgumentParser:
    """The full argument parser with every available subcommand."""
    parser = argparse.ArgumentParser(
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
            if exc.name == module_name:  # subcommand not part of this build: say so
                logging.getLogger(__name__).warning("subcommand module %s is missing", module_name)
                continue
            raise
        module.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the console script; returns the exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.WARNING,
        format="%(levelname)s %(name)s: %(message)s",
    )
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except ToolAuditError as exc:
        print(f"toolaudit: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("toolaudit: interrupted; finished work is kept and a rerun resumes", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

"""The generic subcommand of a registered audit without CLI code of its own.

``toolaudit NAME --out DIR [--seed N] [--data-root DIR] [--json]`` runs the audit's demo
configuration through the registry (:func:`toolaudit.audits.run_audit`), writes its
results file and ``report.md`` / ``report.html`` into ``DIR``, and prints its headline
(or the results document with ``--json``). An audit whose registry line names a
``command`` has a module of that name here instead, with options of its own.
"""

from __future__ import annotations

import argparse
from functools import partial
from pathlib import Path
from typing import Any

from toolaudit.audits import (
    audit_headline,
    audit_sections,
    dump_result,
    load_audit,
    results_path,
    run_audit,
)
from toolaudit.cli._common import add_data_root, add_parser, default_data_root, print_json, progress
from toolaudit.cli._validate import output_dir, seed
from toolaudit.errors import ToolAuditError
from toolaudit.report import headline_sentence, visible, write_report


def register_audit(sub: argparse._SubParsersAction[Any], name: str) -> None:
    """Add the generic subcommand ``name`` for the registered audit ``name``."""
    audit = load_audit(name)
    p = add_parser(
        sub,
        name,
        help=f"run the {audit.title} audit on its default configuration",
        example=f"toolaudit {name} --out {name}-out --json",
        description=(
            f"Runs the registered audit '{name}' ({audit.title}) on its default (demo) "
            f"configuration and writes DIR/{audit.result_model.results_file}, DIR/report.md "
            "and DIR/report.html. Every fallback it takes is recorded in the results' "
            "meta.fallbacks, logged as a warning and noted in the report."
        ),
    )
    p.add_argument("--out", type=output_dir, required=True, help="output folder")
    p.add_argument("--seed", type=seed, default=0, help="seed for every stochastic step")
    add_data_root(p)
    p.add_argument("--json", action="store_true", help="print the results document as JSON")
    p.set_defaults(func=partial(run, name))


def run(name: str, args: argparse.Namespace) -> int:
    """Run the registered audit ``name`` into ``--out``; print its headline or JSON."""
    out: Path = args.out
    data_root = args.data_root or default_data_root()
    if data_root is not None and not data_root.is_dir():
        raise ToolAuditError(f"--data-root {data_root}: no such folder")
    audit = load_audit(name)
    with progress(name) as cb:
        result = run_audit(name, out, seed=args.seed, data_root=data_root, progress=cb)
    write_report(out, f"toolaudit {name}", audit_sections(audit, result))
    path = results_path(audit, out)
    if args.json:
        print_json(dump_result(result))
    else:
        print(visible(headline_sentence(audit.title, audit_headline(audit, result))))
        print(f"wrote {visible(str(path))} and {visible(str(out / 'report.html'))}")
    return 0

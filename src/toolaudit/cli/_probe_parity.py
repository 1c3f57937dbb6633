"""``probe parity``: the same tau2 study on two harnesses, compared task by task."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from toolaudit.cli._common import add_parser, print_json
from toolaudit.cli._validate import output_dir, seed
from toolaudit.errors import ConfigError
from toolaudit.report import visible


def add_parity(psub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``probe parity``."""
    p = add_parser(
        psub,
        "parity",
        help="the same tau2 study on two harnesses (tau2-bench itself and Inspect's port), "
        "compared task by task",
        example="toolaudit probe parity results/probe-tau2-scripted/retail "
        "results/probe-tau2bench-scripted/retail --out out/parity-retail --report",
    )
    p.add_argument("a", type=Path, help="study folder A (e.g. --harness inspect)")
    p.add_argument("b", type=Path, help="study folder B (e.g. --harness tau2)")
    p.add_argument("--n-boot", type=int, default=2000, help="task-cluster bootstrap resamples")
    p.add_argument("--seed", type=seed, default=0, help="bootstrap seed")
    p.add_argument("--out", type=output_dir, default=None, help="write DIR/parity.json")
    p.add_argument("--report", action="store_true", help="also write DIR/report.html and "
                   "DIR/report.md (needs --out)")  # fmt: skip
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.set_defaults(func=_parity)


def _parity(args: argparse.Namespace) -> int:
    from toolaudit.probes import parity, parity_section
    from toolaudit.report import run_metadata, write_report, write_results

    if args.report and args.out is None:
        raise ConfigError("--report needs --out")
    if args.n_boot < 1:
        raise ConfigError(f"invalid n-boot={args.n_boot}; allowed: an integer >= 1")
    doc = parity(args.a, args.b, seed=args.seed, n_boot=args.n_boot)
    if args.out is not None:
        import os

        for side in ("a", "b"):  # a results file names no machine's layout
            doc[side]["folder"] = os.path.relpath(doc[side]["folder"], args.out.resolve())
        meta = run_metadata(command="probe parity", seed=args.seed,
                            config={"a": str(args.a), "b": str(args.b), "n_boot": args.n_boot})  # fmt: skip
        write_results(args.out / "parity.json", {"meta": meta, **doc})
        if args.report:
            write_report(args.out, "toolaudit probe parity", [parity_section(doc)])
    if args.json:
        print_json(doc)
        return 0
    for text in doc["sentences"]:
        sys.stdout.write(visible(text) + "\n")
    return 0

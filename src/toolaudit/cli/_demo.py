"""``toolaudit demo``: every audit on embedded defaults, one HTML report."""

from __future__ import annotations

import argparse
import importlib
import logging
import sys
import time
from pathlib import Path

from toolaudit.cli._common import add_data_root, add_parser, default_data_root, progress
from toolaudit.errors import ToolAuditError
from toolaudit.report import Section, write_report, write_results
from toolaudit.report._meta import run_metadata

logger = logging.getLogger(__name__)

# (part name, package exposing demo_sections), in report order.
PARTS: list[tuple[str, str]] = [
    ("traces", "toolaudit.traces"),
    ("datasets", "toolaudit.datasets"),
    ("leakage", "toolaudit.leakage"),
    ("redaction", "toolaudit.redaction"),
    ("probe", "toolaudit.probes"),
    ("faults", "toolaudit.faults"),
]


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``demo`` subcommand."""
    p = add_parser(
        sub,
        "demo",
        help="run every audit on embedded defaults and write DIR/report.html",
        example="toolaudit demo --out demo-out",
        description=(
            "Runs every audit on embedded defaults: the controlled tcr-shortcut benchmark "
            "(leakage, redaction with the controlled frozen model), the researchops probe "
            "study, and fault readings with the embedded Qwen instruct model. Parts that need "
            "the public tau2-bench / tau-bench files read them from --data-root and are "
            "skipped, with a line in the report, when absent. Writes each audit's JSON, "
            "report.md and a self-contained report.html into --out."
        ),
    )
    p.add_argument("--out", type=Path, required=True, help="output folder")
    p.add_argument("--seed", type=int, default=0, help="seed for every stochastic step")
    p.add_argument(
        "--only",
        nargs="+",
        choices=[name for name, _ in PARTS],
        default=None,
        help="run only these parts",
    )
    add_data_root(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run the demo parts in order; a failing part is reported and the rest still run."""
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    data_root = args.data_root or default_data_root()
    if data_root is not None and not data_root.is_dir():
        raise ToolAuditError(f"--data-root {data_root}: no such folder")
    wanted = args.only or [name for name, _ in PARTS]
    sections: list[Section] = []
    timings: list[list[object]] = []
    failed: list[str] = []
    for name, package in PARTS:
        if name not in wanted:
            continue
        start = time.perf_counter()
        print(f"[demo] {name} ...", file=sys.stderr, flush=True)
        try:
            module = importlib.import_module(package)
            with progress(f"{name}") as cb:
                sections += module.demo_sections(
                    out, data_root=data_root, seed=args.seed, progress=cb
                )
            status = "ok"
        except ToolAuditError as exc:
            status = f"failed: {exc}"
            failed.append(name)
            sections.append(Section(name).text(f"This part failed: {exc}"))
        elapsed = time.perf_counter() - start
        timings.append([name, status, round(elapsed, 1)])
        print(f"[demo] {name}: {status} ({elapsed:.1f} s)", file=sys.stderr, flush=True)
    overview = Section("Overview").text(
        "toolaudit demo on embedded defaults. Public data root: "
        + (str(data_root) if data_root else "not found (parts that need it were skipped)")
        + f". Seed {args.seed}."
    )
    overview.table("Parts run", ["part", "status", "seconds"], timings)
    write_results(
        out / "demo.json",
        {
            "parts": [{"part": n, "status": s} for n, s, _ in timings],
            "meta": run_metadata(
                command="demo",
                seed=args.seed,
                config={"data_root": bool(data_root), "only": wanted},
            ),
        },
    )
    path = write_report(out, "toolaudit demo report", [overview, *sections])
    print(f"report: {path}", file=sys.stderr)
    return 1 if failed else 0

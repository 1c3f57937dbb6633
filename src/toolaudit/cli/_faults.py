"""``toolaudit faults run`` and ``toolaudit faults analyze``."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from toolaudit.cli._common import add_data_root, add_parser, default_data_root, print_json, progress
from toolaudit.cli._validate import output_dir, seed


def register(sub: Any) -> None:
    """Add the ``faults`` command group."""
    parser = add_parser(
        sub,
        "faults",
        help="fault injection into one tool return, read through model log-probabilities",
        example="toolaudit faults run --out faults-out --tasks 20",
    )
    fsub = parser.add_subparsers(dest="faults_command", metavar="SUBCOMMAND")
    run = add_parser(
        fsub,
        "run",
        help="replay tasks, inject each arm at the site, write DIR/faults.json",
        example="toolaudit faults run --out faults-out --tasks 3 --k-max 1 --json",
    )
    run.add_argument("--out", type=output_dir, required=True, help="output folder (resumable)")
    pick = run.add_mutually_exclusive_group()
    pick.add_argument("--tasks", type=int, default=None, help="score the first N tasks with a site")
    pick.add_argument("--task-ids", nargs="+", default=None, help="score exactly these task ids")
    run.add_argument(
        "--model", default=None, help="HF model id or local path (default: embedded Gemma 3 270M)"
    )
    run.add_argument(
        "--arms",
        nargs="+",
        default=None,
        help="arms (default: clean failed truncated falsified_status falsified_payment)",
    )
    run.add_argument("--k-max", type=int, default=3, help="read k = 0..K calls after the site")
    run.add_argument(
        "--source",
        default="replay",
        help="'replay' (tau2 retail reference actions; the shipped mini domain when no "
        "data) or a tau2 results / tau-bench file to read recorded trajectories from",
    )
    run.add_argument(
        "--policy", choices=("full", "compact"), default="full", help="policy text in the prompt"
    )
    run.add_argument("--seed", type=seed, default=0, help="seed (falsified payment ids)")
    run.add_argument("--json", action="store_true", help="print the summary as JSON")
    add_data_root(run)
    run.set_defaults(func=_run)
    ana = add_parser(
        fsub,
        "analyze",
        help="recompute the summary and write the report from DIR/rows.jsonl",
        example="toolaudit faults analyze faults-out --json",
    )
    ana.add_argument("dir", type=Path, help="a folder written by 'faults run'")
    ana.add_argument("--json", action="store_true", help="print the summary as JSON")
    ana.set_defaults(func=_analyze)


def _run(args: argparse.Namespace) -> int:
    from toolaudit.faults import ARMS, FaultsConfig, report_section, run_faults
    from toolaudit.report import write_report

    config = FaultsConfig(
        source=args.source,
        arms=tuple(args.arms) if args.arms else ARMS,
        k_max=args.k_max,
        tasks=args.tasks,
        task_ids=tuple(args.task_ids) if args.task_ids else None,
        model=args.model,
        policy=args.policy,
        seed=args.seed,
    )
    root = args.data_root or default_data_root()
    with progress("faults") as cb:
        payload = run_faults(args.out, config=config, data_root=root, progress=cb)
    write_report(args.out, "toolaudit faults", [report_section(payload)])
    if args.json:
        print_json({"counts": payload["counts"], "summary": payload["summary"]})
    return 0


def _analyze(args: argparse.Namespace) -> int:
    from toolaudit.faults import analyze, report_section
    from toolaudit.report import write_report

    payload = analyze(args.dir)
    write_report(args.dir, "toolaudit faults", [report_section(payload)])
    if args.json:
        print_json({"counts": payload["counts"], "summary": payload["summary"]})
    return 0

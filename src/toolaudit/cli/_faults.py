"""``toolaudit faults run`` and ``toolaudit faults analyze``."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

from toolaudit.cli._common import add_data_root, add_parser, default_data_root, print_json, progress
from toolaudit.cli._validate import output_dir, resolved_path, seed

if TYPE_CHECKING:
    from toolaudit.faults import FaultsResult


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
        description="Replay the tau2 retail tasks' reference actions (or read recorded "
        "trajectories with --source FILE), inject each arm at the first get_order_details "
        "call at position two or later, and read the model's log-probabilities there and "
        "at the next calls. Writes DIR/faults.json, DIR/report.md and DIR/report.html; "
        "DIR/rows.jsonl grows one line per task, so an interrupted run resumes (with the "
        "same options only).",
    )
    run.add_argument("--out", type=output_dir, required=True, help="output folder (resumable)")
    pick = run.add_mutually_exclusive_group()
    pick.add_argument("--tasks", type=int, default=None, help="score the first N tasks with a site")
    pick.add_argument("--task-ids", nargs="+", default=None, help="score exactly these task ids")
    run.add_argument(
        "--model",
        default="embedded:qwen",
        help="model spec (default embedded:qwen; also embedded:gemma, llama:qwen, hf:PATH, "
        "openai:MODEL@URL,tokenizer=FOLDER|FILE.gguf, ...; options as ,KEY=VALUE): it "
        "must render chats and score log-likelihoods",
    )
    run.add_argument("--device", default="cpu", help="device for local models (cpu, cuda)")
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
        help="'replay' (the domain's reference actions) or a results file read through "
        "toolaudit.traces (tau2-bench results, tau-bench list, Episode JSONL)",
    )
    run.add_argument(
        "--domain",
        choices=("retail", "mini"),
        default="retail",
        help="retail: tau2/domains/retail under --data-root (required); mini: the shipped "
        "4-task order desk, recorded as a fallback in faults.json",
    )
    run.add_argument(
        "--policy", choices=("full", "compact"), default="full", help="policy text in the prompt"
    )
    run.add_argument("--seed", type=seed, default=0, help="seed (falsified payment ids)")
    run.add_argument(
        "--workers",
        type=int,
        default=1,
        help="score tasks in N processes of one thread each (default 1: this process); "
        "2 on a 2-core machine uses the cores best",
    )
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
    ana.set_defaults(func=_analyze, config_replay=_replay_run_dir)


def _run(args: argparse.Namespace) -> int:
    from toolaudit.errors import ConfigError
    from toolaudit.faults import ARMS, FaultsAuditConfig, FaultsConfig, FaultsResult

    root = args.data_root or default_data_root()
    source = args.source
    if source != "replay":
        source = str(resolved_path(source, "--source"))
    try:
        config = FaultsConfig(
            source=source,
            domain=args.domain,
            data_root=str(resolved_path(root, "--data-root")) if root is not None else None,
            arms=tuple(args.arms) if args.arms else ARMS,
            k_max=args.k_max,
            tasks=args.tasks,
            task_ids=tuple(args.task_ids) if args.task_ids else None,
            model=args.model,
            device=args.device,
            policy=args.policy,
            seed=args.seed,
            workers=args.workers,
        )
    except ConfigError as exc:  # the config names its field; the user typed the option
        raise exc.for_option() from None
    from toolaudit.audits import run_audit

    audit_config = FaultsAuditConfig(run=config, rows_dir=".")  # rows beside faults.json
    with progress("faults") as cb:
        result = run_audit("faults", args.out, config=audit_config, progress=cb)
    assert isinstance(result, FaultsResult)
    write_faults_report(args.out, result)
    if args.json:
        print_json({"counts": result.counts, "summary": result.summary})
    return 0


def _analyze(args: argparse.Namespace) -> int:
    from toolaudit.faults import FaultsResult, analyze

    result = FaultsResult.from_payload(analyze(args.dir))
    write_faults_report(args.dir, result)
    if args.json:
        print_json({"counts": result.counts, "summary": result.summary})
    return 0


def write_faults_report(out: Path, result: FaultsResult) -> None:
    """``report.md`` and ``report.html`` of a faults result, its fallbacks listed once."""
    from toolaudit.faults import report_section
    from toolaudit.report import with_fallbacks, write_report

    doc = result.model_dump(mode="python", exclude_unset=True)
    sections = with_fallbacks([report_section(doc)], result.fallbacks, title="Faults")
    write_report(out, "toolaudit faults", sections)


def _replay_run_dir(config: dict[str, Any], path: Path) -> dict[str, Any]:
    """A ``--config`` replay of ``faults.json`` by ``faults analyze``: the run folder is
    the one the results file lies in (the run writes it there)."""
    return config if "dir" in config else {**config, "dir": str(path.parent)}

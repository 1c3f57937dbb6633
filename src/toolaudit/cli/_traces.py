"""``toolaudit traces inspect|convert``: summarize and convert trace files."""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path
from typing import Any

from toolaudit.cli._common import (
    add_mapping_option,
    add_parser,
    load_mapping,
    print_json,
    safe_text,
)
from toolaudit.cli._validate import finite_float, output_file
from toolaudit.errors import ConfigError
from toolaudit.runs import temp_beside
from toolaudit.traces import FORMAT_NAMES

logger = logging.getLogger(__name__)

_FORMATS = ("auto", *FORMAT_NAMES)
# The keys promised by DESIGN.md for `traces inspect --json`; the summary adds more.
STABLE_KEYS = ("format", "episodes", "tasks", "tool_calls", "tool_results", "mean_reward")


def register(sub: Any) -> None:
    """Add ``traces`` with its ``inspect`` and ``convert`` subcommands."""
    traces = sub.add_parser(
        "traces",
        help="inspect and convert agent trace files",
        description="Read agent runs (tau2-bench files and folders, tau-bench, Inspect AI "
        "logs, Episode / Example JSONL, any JSONL through a mapping), count them and "
        "convert them to JSONL.",
        epilog="Example:\n  toolaudit traces inspect ../shared/data/tau2/simulations/"
        "retail__gpt-4.1__user-gpt-4.1__test40x1.json --json",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    tsub = traces.add_subparsers(dest="traces_command", metavar="SUBCOMMAND")

    p = add_parser(
        tsub,
        "inspect",
        help="summarize a trace file or tau2 domain folder (runs, tasks, tool calls, reward)",
        example="toolaudit traces inspect ../shared/data/tau2/simulations/"
        "retail__gpt-4.1__user-gpt-4.1__test40x1.json --json",
    )
    p.add_argument(
        "path",
        type=Path,
        help="trace file (JSON / JSONL / Inspect .eval), tau2 results folder or domain folder",
    )
    _add_format_options(p)
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    p.set_defaults(func=_inspect)

    c = add_parser(
        tsub,
        "convert",
        help="write a trace file as Example or Episode JSONL",
        example="toolaudit traces convert ../shared/data/tau-bench/"
        "retail__tool-calling__openai-model-masked__100x1.json --out retail.jsonl",
    )
    c.add_argument("path", type=Path, help="trace file (JSON / JSONL)")
    c.add_argument("--out", type=output_file, required=True, help="output JSONL file")
    c.add_argument(
        "--to",
        choices=("examples", "episodes"),
        default="examples",
        help="record kind to write (default: examples; one per run, label = reward >= "
        "threshold, group = task id)",
    )
    c.add_argument(
        "--threshold",
        type=finite_float(),
        default=1.0,
        help="reward at or above which a run is labelled 1 (default: 1.0, tau2-bench's "
        "success: full reward; probe's pass threshold is 0.5 because it also reads "
        "partial-credit rewards)",
    )
    _add_format_options(c)
    c.add_argument("--json", action="store_true", help="print the counts as JSON")
    c.set_defaults(func=_convert)

    traces.set_defaults(func=lambda args: _missing_subcommand(traces))


def _add_format_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--format", default="auto", choices=_FORMATS, help="input format (default: auto)"
    )
    add_mapping_option(p)


def _missing_subcommand(parser: argparse.ArgumentParser) -> int:
    parser.print_help()
    return 2


def _inspect(args: argparse.Namespace) -> int:
    from toolaudit.traces import inspect_path, summary_rows

    summary = inspect_path(args.path, format=args.format, mapping=load_mapping(args))
    if args.json:
        print_json(summary.as_dict())
        return 0
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    from toolaudit.report import fmt

    # Everything from the trace (tool names, termination reasons, the path) is printed as
    # Text with control characters shown, never interpreted as rich markup.
    table = Table(title=Text(safe_text(args.path)), show_header=True)
    table.add_column("quantity")
    table.add_column("value", justify="right")
    for name, value in summary_rows(summary):
        table.add_row(Text(name), Text(safe_text(fmt(value))))
    console = Console()
    console.print(table)
    if summary.tools:
        top = sorted(summary.tools.items(), key=lambda kv: (-kv[1], kv[0]))[:10]
        tools = Table(title="most frequent tools", show_header=True)
        tools.add_column("tool")
        tools.add_column("count", justify="right")
        for name, n in top:
            tools.add_row(Text(safe_text(name)), Text(str(n)))
        console.print(tools)
    return 0


def _convert(args: argparse.Namespace) -> int:
    from toolaudit.traces import ConversionCounts, load_episodes, load_examples, write_jsonl

    out: Path = args.out
    if out.is_dir():
        raise ConfigError.invalid(
            "--out", "a file path for the JSONL output, not a folder", str(out)
        )
    if not out.parent.is_dir():
        raise ConfigError.invalid("--out", "a file in an existing folder", str(out))
    counts = ConversionCounts()
    records: Any
    if args.to == "episodes":
        records = load_episodes(args.path, format=args.format, mapping=load_mapping(args))
    else:
        records = load_examples(
            args.path,
            format=args.format,
            mapping=load_mapping(args),
            threshold=args.threshold,
            counts=counts,
        )
    # Write beside the target and rename, so bad input never leaves a truncated file; the
    # temporary name is unique, so two conversions into one file never share it.
    tmp = temp_beside(out)
    try:
        written = write_jsonl(tmp, records)
        tmp.replace(out)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    result = {
        "out": str(args.out),
        "to": args.to,
        "written": written,
        "skipped_no_reward": counts.skipped_no_reward,
    }
    if args.json:
        print_json(result)
    else:
        skipped = (
            f", skipped {counts.skipped_no_reward} without a reward"
            if counts.skipped_no_reward
            else ""
        )
        sys.stdout.write(f"wrote {written} {args.to} to {args.out}{skipped}\n")
    return 0

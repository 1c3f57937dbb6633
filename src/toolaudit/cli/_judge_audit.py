"""``toolaudit probe judge-audit TRACES``: the seed's judge audit on any trace file."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from toolaudit.cli._common import add_data_root, add_parser, default_data_root, print_json, progress
from toolaudit.cli._validate import output_dir, seed
from toolaudit.errors import ConfigError, ToolAuditError


def _views(text: str) -> tuple[str, ...]:
    from toolaudit.probes import AUDIT_VIEWS

    views = tuple(v.strip() for v in text.split(",") if v.strip())
    for v in views:
        if v not in AUDIT_VIEWS:
            raise argparse.ArgumentTypeError(f"allowed {', '.join(AUDIT_VIEWS)}; got {v!r}")
    return views


def add_judge_audit(psub: Any) -> None:
    """Add ``probe judge-audit``."""
    p = add_parser(
        psub,
        "judge-audit",
        help="the seed's judge audit: fixed trajectories from any trace file shown to "
        "judges under presentation changes",
        example="toolaudit probe judge-audit ../shared/data/tau2/simulations/"
        "retail__gpt-4.1__user-gpt-4.1__test40x1.json --judge-model llama:qwen "
        "--judge-model llama:gemma --records 8 --out out/judge-audit",
        description="Shows each chosen fixed trajectory to every judge under presentation "
        "changes of the same trajectory (original; repeat: the identical payload again; "
        "tool_rename: aliases consistent across tools, policy and calls; reformat: tool "
        "outputs re-laid out, values kept), --repeats calls per view. The judge reads the "
        "task criteria, the domain policy, the tools and the trajectory, never the agent's "
        "identity or the native reward, and answers PASS / FAIL / INSUFFICIENT with a "
        "one-sentence reason (by default the reason first, labelled, then the verdict). "
        "Each call's sampling seed depends on the record, the view, the judge and the call "
        "index. Reports, per judge, verdict shares, view flips against "
        "repeat flips (task-cluster intervals), agreement with native reward and κ, and "
        "procedural objections (a keyword heuristic); between judges, disagreement on the "
        "same (record, view) with both reasons. Resumable: rerun the same command.",
    )
    p.add_argument(
        "traces",
        nargs="+",
        help="files or folders `toolaudit traces` reads as episodes; with several (say, "
        "several agents' runs) --records is shared out evenly over them",
    )
    p.add_argument(
        "--judge-model",
        action="append",
        required=True,
        metavar="SPEC",
        help="a judge (any toolaudit.models spec: embedded:qwen, llama:qwen, llama:gemma, "
        "openai:MODEL@URL, py:module:function); repeat for several judges; a spec ending "
        "in ,temperature=T sets that judge's temperature (one model at two settings is two "
        "judges sharing the loaded model)",
    )
    p.add_argument(
        "--views",
        type=_views,
        default=None,
        help="comma-separated views (default original,repeat,tool_rename,reformat; the "
        "content cuts full, final_answer, procedure are available under those names)",
    )
    p.add_argument("--repeats", type=int, default=3, help="byte-identical calls per view")
    p.add_argument("--records", type=int, default=40, help="records chosen (stratified)")
    p.add_argument("--seed", type=seed, default=0, help="record choice, sampling and bootstrap")
    p.add_argument("--judge-temperature", type=float, default=0.7, help="judge sampling")
    p.add_argument(
        "--prompt",
        choices=("reason-first", "verdict-first"),
        default="reason-first",
        help="reason-first (default): a 'Reason:' sentence, then 'Verdict:'; verdict-first: "
        "the verdict word on the first line, then a reason (the first committed study's)",
    )
    p.add_argument(
        "--max-tokens",
        type=int,
        default=None,
        help="judge reply length (default 128 with reason-first, 64 with verdict-first)",
    )
    add_data_root(p)
    p.add_argument("--out", type=output_dir, required=True, help="run folder (resumable)")
    p.add_argument(
        "--partial",
        action="store_true",
        help="ask no judge: analyse the records that already have every verdict in --out "
        "(also while the study runs) into --out/partial/",
    )
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.set_defaults(func=_judge_audit)


def _judge_audit(args: argparse.Namespace) -> int:
    from toolaudit.probes import PRESENTATION_VIEWS, JudgeAuditConfig, judge_audit_traces
    from toolaudit.report import visible

    data_root = args.data_root or default_data_root()
    if data_root is not None and not data_root.is_dir():
        raise ToolAuditError(f"--data-root {data_root}: no such folder")
    try:
        config = JudgeAuditConfig(
            judges=tuple(args.judge_model),
            views=args.views or PRESENTATION_VIEWS,
            n_repeats=args.repeats,
            n_records=args.records,
            seed=args.seed,
            temperature=args.judge_temperature,
            max_tokens=args.max_tokens or (128 if args.prompt == "reason-first" else 64),
            prompt=args.prompt,
        )
    except ConfigError as exc:
        raise exc.for_option() from None
    with progress("judge audit", enabled=not args.json) as cb:
        traces = [args.traces] if isinstance(args.traces, str) else args.traces  # a replay
        result = judge_audit_traces(
            traces, config, out_dir=args.out, data_root=data_root, progress=cb,
            partial=args.partial,
        )  # fmt: skip
    if args.json:
        print_json(result)
        return 0
    for j in result["judges"]:
        p = j["procedural_objections"]
        sys.stdout.write(
            f"{visible(j['judge'])}: view flips {_f(j['view_flips']['rate'])}, repeat flips "
            f"{_f(j['repeat_flips']['rate'])}, agreement with native "
            f"{_f(j['native_agreement'])} (kappa {_f(j['native_kappa'])}), unparseable "
            f"{_f(j['unparseable_share'])}, procedural {p['procedure']}/"
            f"{p['n_fail_on_native_pass']}\n"
        )
    for b in result["between"]:
        sys.stdout.write(
            f"{visible(b['judges'][0])} vs {visible(b['judges'][1])}: disagreement "
            f"{_f(b['disagreement'])} on {b['n_pairs']} (record, view) pairs\n"
        )
    if args.partial:
        part = result["partial"]
        sys.stdout.write(
            f"partial: records with every verdict, {part['records_complete']} of "
            f"{part['records_chosen']} ({part['verdicts']} of {part['verdicts_planned']} "
            "verdicts so far)\n"
        )
    folder = args.out / "partial" if args.partial else args.out
    sys.stdout.write(f"wrote {visible(str(folder / 'judge_audit.json'))} and report.html\n")
    return 0


def _f(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.3f}"

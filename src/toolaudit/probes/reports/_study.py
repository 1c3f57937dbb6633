"""Report sections of the probe audit."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from toolaudit.probes._mutations import MUTATED
from toolaudit.probes.analysis._findings import compare_findings
from toolaudit.probes.analysis._runs import PROBES
from toolaudit.probes.analysis._sentences import sentence
from toolaudit.report import Finding, Section, fmt

logger = logging.getLogger(__name__)

RETAIL_PAIR = (
    "retail__gpt-4.1__user-gpt-4.1__test40x1.json",
    "retail__ft-gpt-4.1-sft__user-gpt-4.1__test40x1.json",
)


def _gap_figure(cells: list[dict[str, Any]]) -> Any:
    import numpy as np

    from toolaudit.report import new_figure

    policies = list(dict.fromkeys(c["policy"] for c in cells))
    ran = {c["condition"] for c in cells}
    # one panel per mutated condition the study ran (none for one it did not: an empty
    # frame reads as a zero gap); the repeat control only when nothing else ran
    conds = (
        [c for c in MUTATED if c != "repeat" and c in ran]
        or [c for c in MUTATED if c in ran]
        or ["repeat"]
    )
    fig, axes = new_figure(
        ncols=len(conds), figsize=(3.0 * len(conds), 3.4), sharey=True, squeeze=False
    )
    axes = list(axes[0])
    x = np.arange(len(policies))
    for ax, cond in zip(axes, conds, strict=True):
        by = {c["policy"]: c for c in cells if c["condition"] == cond}
        raw = [by[p]["vrg"] if p in by else np.nan for p in policies]
        res = [by[p]["vrg_rescored"] if p in by else np.nan for p in policies]
        ax.bar(x - 0.2, raw, 0.4, label="gap", color="#2b5797")
        ax.bar(x + 0.2, res, 0.4, label="after rescoring", color="#9fb8e0", hatch="//")
        ax.axhline(0, color="black", lw=0.6)
        ax.set_title(cond, fontsize=9)
        ax.set_xticks(x, policies, rotation=45, ha="right", fontsize=8)
    axes[0].set_ylabel("VRG (original − mutated)")
    axes[0].legend(fontsize=7)
    fig.tight_layout()
    return fig


def _forest_figure(
    rows: list[tuple[str, float, list[float | None]]],
    margin: float,
    xlabel: str = "paired difference Δ = mutated − original (90% task-cluster interval)",
) -> Any:
    from toolaudit.report import new_figure

    fig, ax = new_figure(figsize=(6.5, 0.28 * len(rows) + 1.2))
    ax.axvspan(-margin, margin, color="#dde8f7", label=f"±{margin:.2f} equivalence band")
    ax.axvline(0, color="black", lw=0.6)
    for i, (_label, est, (lo, hi)) in enumerate(rows):
        y = len(rows) - 1 - i
        if lo is not None and hi is not None:
            ax.plot([lo, hi], [y, y], color="#2b5797", lw=1.6)
        ax.plot([est], [y], "o", color="#2b5797", ms=4)
    ax.set_yticks(range(len(rows)), [r[0] for r in reversed(rows)], fontsize=7)
    ax.set_xlabel(xlabel)
    ax.legend(fontsize=7, loc="lower left")
    fig.tight_layout()
    return fig


def _sentences(result: dict[str, Any], prefix: str) -> list[str]:
    return [
        sentence(Finding(**f))
        for f in result.get("conclusions", [])
        if f["name"] == prefix or f["name"].startswith(prefix + ".")
    ]


def study_section(result: dict[str, Any], *, margin: float = 0.10) -> Section:
    """The controlled study: gaps before and after rescoring, pass rates, controls.

    Every conclusion sentence is rendered from ``result["conclusions"]`` (computed
    findings); the rest is description of what was run.
    """
    cells = result["cells"]
    sec = Section("Probe audit: controlled ResearchOps study")
    seeds = result.get("meta", {}).get("config", {}).get("n_seeds")
    sec.text(
        f"{result['records']} runs: {result['tasks']} tasks × {len(result['policies_run'])} "
        f"policies ({', '.join(result['policies_run'])}) × {len(result['conditions'])} "
        f"conditions × {seeds if seeds is not None else 'the recorded'} seed labels. The "
        "composite verifier credits canonical tool names with weight 0.25 (the deliberate "
        "defect); rescoring maps names and presentation back before scoring."
    )
    for agent in result.get("agents", []):
        sec.text(
            f"{agent['policy']} is driven by {agent['model']} sampled at temperature "
            f"{agent['temperature']}: {agent['generations']} generations over {agent['runs']} "
            f"runs, {agent['tool_calls']} tool calls executed, {agent['parse_errors']} tool "
            f"calls that failed to parse (in {agent['runs_with_parse_errors']} runs; kept in "
            f"each record's source.agent_info), {agent['runs_without_submit']} runs without a "
            f"submitted report, {agent['hit_step_limit']} stopped at the step limit."
        )
    for text in _sentences(result, "probe.attribution"):
        sec.text(text)
    for text in _sentences(result, "probe.misranking"):
        sec.text(text)
    for text in _sentences(result, "probe.positive_control") + _sentences(result, "probe.ptd"):
        sec.text(text)
    for text in _sentences(result, "probe.equivalence"):
        sec.text(text)
    sec.figure(
        "Gap by policy and probe before and after counterfactual rescoring (cf. the seed's Fig. 2)",
        _gap_figure(cells),
    )
    sec.table(
        "Cells: gaps beside pass rates (95% task-cluster intervals; MTR undefined when no "
        "original run passes; equivalence at ±margin on 90% intervals, then corrected)",
        [
            "policy",
            "condition",
            "VRG",
            "VRG 95%",
            "rescored",
            "MSR",
            "MTR",
            "pass orig",
            "PTD",
            "changed",
            "Δ 90%",
            "equiv.",
            "equiv. Bonf.",
            "equiv. Holm",
            "McNemar p (Holm)",
        ],
        [
            [
                c["policy"],
                c["condition"],
                c["vrg"],
                c.get("vrg_ci95"),
                c["vrg_rescored"],
                c["msr"],
                c["mtr"],
                c.get("pass_rate_original"),
                c["ptd"],
                c["behavior_changed_rate"],
                c.get("delta_ci90"),
                c.get("equivalence"),
                c.get("equivalence_bonferroni"),
                c.get("equivalence_holm"),
                c.get("mcnemar_p_holm"),
            ]
            for c in cells
            if c["condition"] != "original"
        ],
    )
    rows = [
        (f"{c['policy']} · {c['condition']}", c["delta"], c["delta_ci90"])
        for c in cells
        if c["condition"] in (*PROBES, "misleading_names", "repeat")
    ]
    sec.figure("Paired differences against the equivalence band", _forest_figure(rows, margin))
    changes = [c for c in MUTATED if c != "repeat"]
    sec.table(
        "Repeat control: pass flips between identical reruns (95% interval) vs under each change",
        ["policy", "repeat flips", "repeat 95%", *changes],
        [
            [
                r["policy"],
                r["repeat_flip_rate"],
                r.get("repeat_flip_rate_ci95"),
                *[r["changed_flip_rate"].get(c) for c in changes],
            ]
            for r in result["repeat_control"]
        ],
    )
    for text in _sentences(result, "probe.repeat_control"):
        sec.text(text)
    sel = result["selection"]
    sec.table(
        f"Policy selection: chosen on {len(sel['selection_tasks'])} tasks, evaluated on the "
        f"{len(sel['heldout_tasks'])} held out",
        ["objective", "selected", "held-out pass rate", "held-out quality", "held-out PTD"],
        [
            [
                r["objective"],
                r["selected"],
                r["heldout_pass_rate"],
                r["heldout_quality"],
                r["heldout_ptd"],
            ]
            for r in sel["objectives"]
        ],
    )
    for text in _sentences(result, "probe.selection"):
        sec.text(text)
    _judge_blocks(sec, result.get("judge") or {}, result)
    transcript_blocks(sec, result.get("transcripts") or [])
    return sec


def transcript_blocks(sec: Section, pairs: list[dict[str, Any]]) -> None:
    """One collapsible original-vs-mutated pair per condition, the differences marked."""
    if pairs:
        sec.text(
            "Transcript pairs, one per condition: the first original run and its mutated twin "
            "(same policy, task and seed) whose actions changed, else whose pass outcome "
            "changed, else the first pair; the system prompt is left out."
        )
    for p in pairs:
        sec.transcript(
            f"{p['condition']}: {p['policy']} on {p['task']} seed {p['seed']} ({p['why']}; "
            f"reward {fmt(p['reward'][0])} → {fmt(p['reward'][1])})",
            [(str(r), str(t)) for r, t in p["original"]],
            [(str(r), str(t)) for r, t in p["mutated"]],
            labels=("original", p["condition"]),
        )


def _judge_blocks(sec: Section, judge: dict[str, Any], result: dict[str, Any]) -> None:
    if judge.get("skipped"):
        return  # shown with the run's fallbacks
    if not judge.get("judges"):
        return
    cfg = judge.get("config") or {}
    origin = (
        f"{cfg['model']} at temperature {cfg['temperature']}, {judge['n_repeats']} "
        f"byte-identical repeats per view"
        if cfg
        else "verdicts read from a file"
    )
    sec.table(
        f"Judge audit ({judge['n_verdicts']} real verdicts on {judge['n_records']} records; "
        f"{origin}; views {', '.join(judge['views'])}; agent identity and native reward "
        "withheld): flips across views vs identical repeats",
        [
            "judge",
            "view flips",
            "view 95%",
            "repeat flips",
            "repeat 95%",
            "pass rate",
            "agree native",
            "κ native",
            "unparseable",
        ],
        [
            [
                j["judge"],
                j["view_flips"]["rate"],
                j["view_flips"]["ci95"],
                j["repeat_flips"]["rate"],
                j["repeat_flips"]["ci95"],
                j["pass_rate"],
                j["native_agreement"],
                j["native_kappa"],
                j.get("unparseable_share"),
            ]
            for j in judge["judges"]
        ],
    )
    for text in _sentences(result, "probe.judge"):
        sec.text(text)
    for b in judge["between"]:
        sec.text(
            f"Between {b['judges'][0]} and {b['judges'][1]}: disagreement "
            f"{fmt(b['disagreement'])} on {b['n_records']} records (κ {fmt(b['kappa'])})."
        )


def _paired_outcome_figure(result: dict[str, Any]) -> Any:
    """Task by task: A's and B's pass rate on every paired task, joined by a line."""
    from toolaudit.report import new_figure

    rows = sorted(
        result["task_level"]["per_task"],
        key=lambda r: (r["pass_rate_b"] - r["pass_rate_a"], r["task"]),
    )
    fig, ax = new_figure(figsize=(5.5, 0.16 * len(rows) + 1.3))
    for y, r in enumerate(rows):
        a, b = r["pass_rate_a"], r["pass_rate_b"]
        colour = "#2b8a3e" if b > a else "#c92a2a" if b < a else "#adb5bd"
        ax.plot([a, b], [y, y], color=colour, lw=1.4)
        ax.plot([a], [y], "o", color="#2b5797", ms=4)
        ax.plot([b], [y], "s", color="#f08c00", ms=4)
    ax.plot([], [], "o", color="#2b5797", label="A")
    ax.plot([], [], "s", color="#f08c00", label="B")
    ax.set_yticks(range(len(rows)), [r["task"] for r in rows], fontsize=6)
    ax.set_xlim(-0.05, 1.05)
    ax.set_xlabel("pass rate over the task's trials")
    ax.set_ylabel("task (sorted by B − A)")
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    fig.tight_layout()
    return fig


def compare_section(result: dict[str, Any], *, title: str) -> Section:
    """A paired comparison of two result files (conclusions rendered from findings)."""
    sec = Section(title)
    a, b = result["a"], result["b"]
    sec.text(
        f"A = {Path(a['path']).name}, B = {Path(b['path']).name}: {result['paired_tasks']} "
        f"paired tasks; only in A {len(result['only_in_a'])}, only in B "
        f"{len(result['only_in_b'])}; unrewarded runs {a['unrewarded_runs']}/"
        f"{b['unrewarded_runs']}; premature endings {a['premature_runs']}/{b['premature_runs']} "
        f"(excluded {a['excluded_premature']}/{b['excluded_premature']}); tasks missing trials "
        f"{len(a['tasks_missing_trials'])}/{len(b['tasks_missing_trials'])}."
    )
    for w in result.get("warnings", []):
        sec.text(f"Warning: {w}.")
    changed = result.get("changed_tasks") or []
    views = [*a.get("view", []), *b.get("view", [])]
    if changed:
        more = f" and {len(changed) - 20} more" if len(changed) > 20 else ""
        sec.text(
            f"Tasks whose mean reward moved (B − A ≠ 0): {len(changed)}, ids "
            f"{', '.join(changed[:20])}{more}."
            + (" Open the transcripts with " + " and ".join(f"`{v}`" for v in views) + "."
               if views else "")
        )  # fmt: skip
    for f in compare_findings(result):
        sec.text(sentence(f))
    mc = result["mcnemar"]
    sec.table(
        "Paired comparison (B − A)",
        [
            "mean A",
            "mean B",
            "Δ",
            "Δ 95%",
            "Δ 90%",
            "equivalence (±margin)",
            "A✓B✗",
            "A✗B✓",
            "McNemar p",
        ],
        [
            [
                result["mean_reward_a"],
                result["mean_reward_b"],
                result["delta"],
                result["delta_ci95"],
                result["delta_ci90"],
                result["equivalence"],
                mc["a_pass_b_fail"],
                mc["a_fail_b_pass"],
                mc["p"],
            ]
        ],
    )
    if not mc.get("applicable", True):
        sec.text(f"McNemar not computed: {mc['note']}.")
    paired = result.get("paired_pass_hat_k") or {s: result[s]["pass_hat_k"] for s in "ab"}
    ks = sorted({*paired["a"]["pass_hat_k"], *paired["b"]["pass_hat_k"]}, key=int)
    if ks:
        sec.table(
            f"tau2-bench pass^k on the {result['paired_tasks']} paired tasks (success: reward "
            "1; k up to the smallest trial count per task)",
            ["side", *[f"pass^{k}" for k in ks]],
            [[side.upper(), *[paired[side]["pass_hat_k"].get(k) for k in ks]] for side in "ab"],
        )
    changed = result.get("changed") or []
    if changed:
        sec.table(
            f"Changed tasks ({len(changed)} of {result['paired_tasks']}): mean reward and how "
            "the runs ended on each side",
            ["task", "reward A", "reward B", "endings A", "endings B"],
            [
                [c["task"], c["reward_a"], c["reward_b"],
                 ", ".join(str(e) for e in c["endings_a"]),
                 ", ".join(str(e) for e in c["endings_b"])]
                for c in changed
            ],
        )  # fmt: skip
    sec.figure(
        "Task by task: pass rate of A and B on each paired task (green: B higher, red: A "
        "higher, grey: equal)",
        _paired_outcome_figure(result),
    )
    sec.figure(
        "Paired difference against the equivalence band",
        _forest_figure(
            [
                ("reward B − A", result["delta"], result["delta_ci90"]),
                (
                    "pass rate B − A",
                    result["task_level"]["delta"],
                    result["task_level"]["delta_ci90"],
                ),
            ],
            result["margin"],
            xlabel="paired difference Δ = B − A (90% task-cluster interval)",
        ),
    )
    return sec

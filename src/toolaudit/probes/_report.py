"""Report sections of the probe audit, and the demo hook."""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

from toolaudit.probes._analysis import PROBES
from toolaudit.probes._compare import compare_files
from toolaudit.probes._mutations import MUTATED
from toolaudit.report import Section, run_metadata, write_results

logger = logging.getLogger(__name__)

RETAIL_PAIR = (
    "retail__gpt-4.1__user-gpt-4.1__test40x1.json",
    "retail__ft-gpt-4.1-sft__user-gpt-4.1__test40x1.json",
)


def _gap_figure(cells: list[dict[str, Any]]) -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    policies = list(dict.fromkeys(c["policy"] for c in cells))
    conds = [c for c in MUTATED if c != "repeat"]
    fig, axes = plt.subplots(1, len(conds), figsize=(3.0 * len(conds), 3.4), sharey=True)
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
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.5, 0.28 * len(rows) + 1.2))
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


def study_section(result: dict[str, Any], *, margin: float = 0.10) -> Section:
    """The controlled study: gaps before and after rescoring, pass rates, controls."""
    cells = result["cells"]
    f = result["findings"]
    sec = Section("Probe audit: controlled ResearchOps study")
    sec.text(
        f"{result['records']} runs: {result['tasks']} tasks × {len(result['policies_run'])} "
        f"scripted policies × {len(result['conditions'])} conditions × seed labels. The "
        "composite verifier credits canonical tool names with weight 0.25 (the deliberate "
        "defect); rescoring maps names and presentation back before scoring."
    )
    sec.text(
        f"careful under tool_rename: gap {f.get('careful_tool_rename_vrg', float('nan')):.3f}, "
        f"after rescoring {f.get('careful_tool_rename_vrg_rescored', float('nan')):.3f}, "
        f"behaviour changed in {f.get('careful_tool_rename_behavior_changed_rate', 0):.0%} of pairs: "
        "the scoring rule, not the agent, caused the gap. overfit under tool_rename: gap "
        f"{f.get('overfit_tool_rename_vrg', float('nan')):.3f}, after rescoring "
        f"{f.get('overfit_tool_rename_vrg_rescored', float('nan')):.3f}, behaviour changed in "
        f"{f.get('overfit_tool_rename_behavior_changed_rate', 0):.0%}: a real behavioural failure."
    )
    misranked = [r["policy"] for r in result["policies"] if r["misranked_by_gap"]]
    if misranked:
        sec.text(
            "Small gaps can hide consistent failure: "
            + ", ".join(
                f"{r['policy']} has mean |gap| {r['mean_abs_vrg']:.3f} over the probes "
                f"(gap-only rank {r['gap_only_rank']}) but MSR {r['mean_msr']:.3f} "
                f"(MSR rank {r['msr_rank']})"
                for r in result["policies"]
                if r["policy"] in misranked
            )
            + ". A gap-only ranking would call them the most robust; they fail under the "
            "original and the mutated evaluation alike. Report pass rates beside gaps."
        )
    mis = f.get("misleading_names_vrg", {})
    sec.text(
        "Positive control (misleading names): reward falls for every tool-using policy ("
        + ", ".join(f"{p} {v:+.3f}" for p, v in mis.items())
        + f"). Proxy–true divergence of proxy_exploit on the proxy tasks: "
        f"{f.get('proxy_exploit_ptd_original', float('nan')):.3f}."
    )
    sec.figure(
        "Gap by policy and probe before and after counterfactual rescoring (cf. the seed's Fig. 2)",
        _gap_figure(cells),
    )
    sec.table(
        "Cells: gaps beside pass rates (95% task-cluster intervals; MTR undefined when no "
        "original run passes)",
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
    sec.table(
        "Repeat control: pass flips between identical reruns vs under each change",
        ["policy", "repeat flips", "tool_rename", "reformat", "misleading_names"],
        [
            [
                r["policy"],
                r["repeat_flip_rate"],
                r["changed_flip_rate"].get("tool_rename"),
                r["changed_flip_rate"].get("reformat"),
                r["changed_flip_rate"].get("misleading_names"),
            ]
            for r in result["repeat_control"]
        ],
    )
    sec.text(
        "The scripted policies and the seeded simulator are deterministic, so identical "
        "reruns never flip here; on real agents (below) rerun noise must be measured."
    )
    sel = result["selection"]["objectives"]
    sec.table(
        "Policy selection: chosen on 12 tasks, evaluated on the 13 held out",
        ["objective", "selected", "held-out pass rate", "held-out quality", "held-out PTD"],
        [
            [
                r["objective"],
                r["selected"],
                r["heldout_pass_rate"],
                r["heldout_quality"],
                r["heldout_ptd"],
            ]
            for r in sel
        ],
    )
    judge = result.get("judge")
    if judge:
        label = "simulated judges" if judge.get("simulated") else "judge verdicts"
        sec.table(
            f"Judge audit ({label}): flips across views vs identical repeats",
            ["judge", "view flips", "repeat flips", "pass rate", "agree native", "κ native"],
            [
                [
                    j["judge"],
                    j["view_flips"]["rate"],
                    j["repeat_flips"]["rate"],
                    j["pass_rate"],
                    j["native_agreement"],
                    j["native_kappa"],
                ]
                for j in judge["judges"]
            ],
        )
        for b in judge["between"]:
            sec.text(
                f"Between {b['judges'][0]} and {b['judges'][1]}: disagreement "
                f"{b['disagreement']:.3f} on {b['n_records']} records (κ {b['kappa']:.3f})."
            )
    return sec


def compare_section(result: dict[str, Any], *, title: str) -> Section:
    """A paired comparison of two result files."""
    sec = Section(title)
    a, b = result["a"], result["b"]
    sec.text(
        f"A = {Path(a['path']).name}, B = {Path(b['path']).name}: {result['paired_tasks']} "
        f"paired tasks; only in A {len(result['only_in_a'])}, only in B "
        f"{len(result['only_in_b'])}; unrewarded runs {a['unrewarded_runs']}/"
        f"{b['unrewarded_runs']}; premature endings {a['premature_runs']}/{b['premature_runs']} "
        "(kept as scored); tasks missing trials "
        f"{len(a['tasks_missing_trials'])}/{len(b['tasks_missing_trials'])}."
    )
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
    for side in ("a", "b"):
        fl = result[f"rerun_flips_{side}"]
        if fl["flip_rate"] is None:
            sec.text(f"Rerun flips ({side.upper()}): {fl['note']}.")
        else:
            sec.text(
                f"Rerun flips ({side.upper()}): {fl['flip_rate']:.3f} "
                f"[{fl['ci95'][0]:.3f}, {fl['ci95'][1]:.3f}] over {fl['n_pairs']} trial pairs."
            )
    sec.figure(
        "Paired difference against the equivalence band",
        _forest_figure(
            [("B − A", result["delta"], result["delta_ci90"])],
            result["margin"],
            xlabel="paired difference Δ = B − A (90% task-cluster interval)",
        ),
    )
    return sec


def demo_sections(
    out_dir: Path,
    *,
    data_root: Path | None,
    seed: int,
    progress: Callable[[int, int, str], None],
) -> list[Section]:
    """Run the controlled study into ``out_dir/probe`` and, when ``data_root`` holds the
    two retail test40 files, their paired comparison; return the report sections."""
    from toolaudit.probes._study import analyze_study, run_probe_study

    study = Path(out_dir) / "probe"
    run_probe_study(study, seed=seed, n_jobs=1, progress=progress)
    result = analyze_study(study, seed=seed)
    sections = [study_section(result)]
    sim = Path(data_root) / "tau2" / "simulations" if data_root else None
    if sim is not None and all((sim / f).exists() for f in RETAIL_PAIR):
        comp = compare_files(sim / RETAIL_PAIR[0], sim / RETAIL_PAIR[1], seed=seed)
        comp["meta"] = run_metadata(
            command="probe compare", seed=seed, config={"a": RETAIL_PAIR[0], "b": RETAIL_PAIR[1]}
        )
        write_results(study / "compare_retail_test40.json", comp)
        sections.append(compare_section(comp, title="Probe audit: tau2 retail test40, paired"))
    else:
        sections[0].text(
            "tau2 retail test40 files not found under the data root; comparison skipped."
        )
    return sections

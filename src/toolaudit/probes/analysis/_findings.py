"""Findings, then prose: every conclusion of the probe report as a computed Finding.

Each builder reads analysed numbers and returns :class:`toolaudit.report.Finding` objects
(value, interval, test, verdict); :func:`~toolaudit.probes.analysis._sentences.sentence` turns
one finding into its report sentence. The verdict is decided here from the numbers, and the sentence is chosen by the
verdict and filled from the finding, so changing the numbers changes the sentence.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from toolaudit.probes._seam import REAL_HARNESSES
from toolaudit.report import Finding

ATTRIBUTED = ("tool_rename", "reformat")


def _iv(pair: Sequence[float | None] | None) -> tuple[float | None, float | None] | None:
    return None if pair is None else (pair[0], pair[1])


def _excludes_zero(pair: Sequence[float | None] | None) -> bool:
    if pair is None or pair[0] is None or pair[1] is None:
        return False
    return bool(pair[0] > 0 or pair[1] < 0)


def attribution(cell: dict[str, Any]) -> Finding:
    """Who caused a cell's gap: the scoring rule, the agent's behaviour, both, or nobody.

    * ``no_gap``: the gap's 95% interval includes 0 (and so does the rescored gap's).
    * ``masked_by_scoring_rule``: no gap, but the rescored gap's interval lies above 0:
      the live score credited calls by name that executed nothing (or something else).
    * ``scoring_rule``: the gap is real, no pair changed its actions, and the rescored
      gap's interval includes 0 (rescoring the same trajectories closes it).
    * ``behaviour``: some pairs changed their actions and the rescored gap stays above 0.
    * ``scoring_rule_and_behaviour``: actions changed, yet rescoring closes the gap.
    * ``unexplained``: actions unchanged, but rescoring does not close the gap.
    """
    gap, rescored = cell.get("vrg_ci95"), cell.get("vrg_rescored_ci95")
    changed = float(cell.get("behavior_changed_rate") or 0.0)
    if not _excludes_zero(gap):
        masked = _excludes_zero(rescored) and (cell.get("vrg_rescored") or 0) > 0
        verdict = "masked_by_scoring_rule" if masked else "no_gap"
    elif changed == 0.0:
        verdict = "unexplained" if _excludes_zero(rescored) else "scoring_rule"
    else:
        verdict = "behaviour" if _excludes_zero(rescored) else "scoring_rule_and_behaviour"
    return Finding(
        name=f"probe.attribution.{cell['policy']}.{cell['condition']}",
        verdict=verdict,
        value=cell["vrg"],
        interval=_iv(gap),
        level=0.95,
        test="task-cluster bootstrap; counterfactual rescoring; action-sequence comparison",
        n=cell.get("n_pairs"),
        subject=f"{cell['policy']} × {cell['condition']}",
        details={
            "vrg_rescored": cell["vrg_rescored"],
            "vrg_rescored_ci95": rescored,
            "behavior_changed_rate": changed,
        },
    )


def misranking(row: dict[str, Any], n_policies: int) -> Finding:
    """Whether a gap-only leaderboard would misrank a policy (small gap, no pass)."""
    return Finding(
        name=f"probe.misranking.{row['policy']}",
        verdict="misranked_by_gap" if row["misranked_by_gap"] else "ranked_consistently",
        value=row["mean_abs_vrg"],
        test="rank by mean |gap| vs rank by mean MSR over the probes",
        n=n_policies,
        subject=row["policy"],
        details={k: row[k] for k in ("mean_msr", "gap_only_rank", "msr_rank")},
    )


def positive_control(cells: Sequence[dict[str, Any]], policies: Sequence[str]) -> Finding:
    """Misleading names: for how many tool-using policies the reward drop is detected."""
    rows = [c for c in cells if c["condition"] == "misleading_names" and c["policy"] in policies]
    detected = [c["policy"] for c in rows if _excludes_zero(c.get("vrg_ci95")) and c["vrg"] > 0]
    verdict = (
        "not_run"
        if not rows
        else "detected_for_all"
        if len(detected) == len(rows)
        else "detected_for_some"
        if detected
        else "not_detected"
    )
    return Finding(
        name="probe.positive_control",
        verdict=verdict,
        value=float(len(detected)),
        test="gap 95% task-cluster interval above 0",
        n=len(rows),
        details={
            "vrg": {c["policy"]: c["vrg"] for c in rows},
            "vrg_ci95": {c["policy"]: c.get("vrg_ci95") for c in rows},
            "detected": detected,
        },
    )


def proxy_divergence(cell: dict[str, Any]) -> Finding:
    """Proxy–true divergence of a policy on the proxy tasks (original condition)."""
    iv = cell.get("ptd_ci95")
    verdict = (
        "proxy_exceeds_quality"
        if iv and iv[0] is not None and iv[0] > 0
        else "quality_exceeds_proxy"
        if iv and iv[1] is not None and iv[1] < 0
        else "no_clear_divergence"
    )
    return Finding(
        name=f"probe.ptd.{cell['policy']}",
        verdict=verdict,
        value=cell["ptd"],
        interval=_iv(iv),
        level=0.95,
        test="task-cluster bootstrap over proxy tasks",
        n=cell.get("n_proxy_tasks"),
        subject=cell["policy"],
    )


def equivalence_summary(cells: Sequence[dict[str, Any]], margin: float) -> Finding:
    """How many meaning-preserving cells are equivalent within ±margin, before and after
    correction across the family."""
    rows = [c for c in cells if c["condition"] in ATTRIBUTED and "equivalence" in c]
    count = {
        k: sum(c.get(k) == "equivalent" for c in rows)
        for k in ("equivalence", "equivalence_bonferroni", "equivalence_holm")
    }
    fam = max((c.get("equivalence_family_size", 0) for c in rows), default=0)
    return Finding(
        name="probe.equivalence",
        verdict="all_equivalent"
        if rows and count["equivalence_holm"] == len(rows)
        else "some_equivalent"
        if count["equivalence"]
        else "none_equivalent",
        value=float(count["equivalence"]),
        test=f"TOST at ±{margin:g} on 90% task-cluster intervals; Bonferroni and Holm across "
        f"{fam} mutated cells",
        n=len(rows),
        details={**count, "family_size": fam, "margin": margin},
    )


def repeat_control_finding(row: dict[str, Any], temperature: float | None) -> Finding:
    """Flips between identical reruns of one policy, against flips under each change."""
    rate, iv = row["repeat_flip_rate"], row.get("repeat_flip_rate_ci95")
    exceeds = [k for k, v in row.get("exceeds_repeat", {}).items() if v]
    return Finding(
        name=f"probe.repeat_control.{row['policy']}",
        verdict="no_rerun_flips" if rate == 0 else "rerun_flips",
        value=rate,
        interval=_iv(iv),
        level=0.95,
        test="pass flips between identical reruns; task-cluster bootstrap",
        n=row.get("n_pairs"),
        subject=row["policy"],
        details={
            "changed_flip_rate": row.get("changed_flip_rate", {}),
            "exceeds_repeat": exceeds,
            "temperature": temperature,
        },
    )


def selection_finding(row: dict[str, Any], n_select: int, n_heldout: int) -> Finding:
    """Which program an objective selects, and how it does on held-out tasks."""
    return Finding(
        name=f"probe.selection.{row['objective']}",
        verdict=row["selected"],
        value=row["heldout_pass_rate"],
        test=f"argmax of the objective on {n_select} tasks; held-out pass rate on {n_heldout}",
        n=n_heldout,
        subject=row["objective"],
        details={"heldout_ptd": row["heldout_ptd"], "heldout_quality": row["heldout_quality"]},
    )


def judge_finding(judge: dict[str, Any]) -> Finding:
    """One judge: flips across views against flips across byte-identical repeats."""
    view, rep = judge["view_flips"], judge["repeat_flips"]
    if view["rate"] is None or rep["rate"] is None:
        verdict = "not_measurable"
    elif rep["ci95"] is not None and view["rate"] > rep["ci95"][1]:
        verdict = "views_exceed_repeat_noise"
    else:
        verdict = "views_within_repeat_noise"
    return Finding(
        name=f"probe.judge.{judge['judge']}",
        verdict=verdict,
        value=view["rate"],
        interval=_iv(view.get("ci95")),
        level=0.95,
        test="verdict flips across views vs across identical repeats; task-cluster bootstrap",
        n=view.get("n_pairs"),
        subject=judge["judge"],
        details={
            "repeat_rate": rep["rate"],
            "repeat_ci95": rep.get("ci95"),
            "native_agreement": judge.get("native_agreement"),
            "native_kappa": judge.get("native_kappa"),
            "unparseable_share": judge.get("unparseable_share"),
            "n_native": judge.get("n_native"),
        },
    )


def study_findings(result: dict[str, Any], *, margin: float) -> list[Finding]:
    """Every conclusion of a study's report, computed from ``result``."""
    cells = result["cells"]
    out: list[Finding] = []
    for c in cells:
        if c["condition"] in ATTRIBUTED and c.get("vrg_ci95") is not None:
            out.append(attribution(c))
    n_pol = len(result["policies"])
    out += [misranking(r, n_pol) for r in result["policies"]]
    tool_users = [p for p in result["policies_run"] if p not in ("shortcut", "inert")]
    out.append(positive_control(cells, tool_users))
    if result.get("harness") in REAL_HARNESSES:
        from toolaudit.probes.analysis._controls import headroom_finding, noop_finding

        out.append(noop_finding(result["noop_baseline"]))
        out += [headroom_finding(r, margin) for r in result["positive_controls"]]
    for c in cells:
        if c["condition"] == "original" and c.get("ptd_ci95") is not None:
            out.append(proxy_divergence(c))
    out.append(equivalence_summary(cells, margin))
    temps = {a["policy"]: a.get("temperature") for a in result.get("agents", [])}
    out += [repeat_control_finding(r, temps.get(r["policy"])) for r in result["repeat_control"]]
    sel = result.get("selection")
    if sel:
        n_sel, n_held = len(sel["selection_tasks"]), len(sel["heldout_tasks"])
        out += [selection_finding(r, n_sel, n_held) for r in sel["objectives"]]
    judge = result.get("judge") or {}
    out += [judge_finding(j) for j in judge.get("judges", [])]
    return out


def compare_findings(result: dict[str, Any]) -> list[Finding]:
    """The conclusions of a two-file comparison: reward Δ, task-level pass-rate Δ, reruns."""
    margin = result["margin"]
    out = [
        Finding(
            name="probe.compare.delta",
            verdict=result["equivalence"],
            value=result["delta"],
            interval=_iv(result["delta_ci90"]),
            level=0.90,
            test=f"TOST at ±{margin:g} on the 90% task-cluster interval of mean reward B − A",
            n=result["paired_tasks"],
            subject="mean reward",
            details={"a": result["mean_reward_a"], "b": result["mean_reward_b"], "margin": margin},
        )
    ]
    tl = result.get("task_level")
    if tl:
        out.append(
            Finding(
                name="probe.compare.task_level",
                verdict=tl["equivalence"],
                value=tl["delta"],
                interval=_iv(tl["delta_ci90"]),
                level=0.90,
                test=f"per-task pass rates, bootstrap over tasks, TOST at ±{margin:g}; exact "
                "sign test over tasks",
                p_value=tl["sign_test_p"],
                n=tl["n_tasks"],
                subject="per-task pass rate",
                details={
                    "a": tl["pass_rate_a"],
                    "b": tl["pass_rate_b"],
                    "margin": margin,
                    "b_higher": tl["tasks_b_higher"],
                    "a_higher": tl["tasks_a_higher"],
                },
            )
        )
    for side in ("a", "b"):
        fl = result[f"rerun_flips_{side}"]
        out.append(
            Finding(
                name=f"probe.compare.reruns.{side}",
                verdict="not_measurable" if fl["flip_rate"] is None else "measured",
                value=fl["flip_rate"],
                interval=_iv(fl.get("ci95")),
                level=0.95,
                test="pass flips between trials of one task; task-cluster bootstrap",
                n=fl["n_pairs"],
                subject=side.upper(),
                details={"note": fl.get("note"), "n_tasks": fl.get("n_tasks")},
            )
        )
    return out

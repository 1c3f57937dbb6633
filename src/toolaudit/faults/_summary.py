"""Paired contrasts against the clean arm (seed Table I) and the figures (seed Figs 1-2).

Every quantity X of an arm is differenced against the clean row of the same task at the
same step: dX = X(arm) - X(clean). Counts are over tasks where both rows exist.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from toolaudit.stats import sign_test

HEADROOM = 0.01  # nats: a clean entropy below this leaves pi no room to move (seed §III-B)
_EPS = 1e-9


def _q(values: Sequence[float]) -> dict[str, float]:
    if not values:
        return {"median": math.nan, "q25": math.nan, "q75": math.nan}
    a = np.asarray(values, dtype=float)
    return {
        "median": float(np.median(a)),
        "q25": float(np.quantile(a, 0.25)),
        "q75": float(np.quantile(a, 0.75)),
    }


def paired(
    rows: Sequence[dict[str, Any]], arm: str, k: int
) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """``(clean_row, arm_row)`` pairs at step ``k``, in task order."""
    clean = {r["task"]: r for r in rows if r["arm"] == "clean" and r["k"] == k}
    return [
        (clean[r["task"]], r)
        for r in rows
        if r["arm"] == arm and r["k"] == k and r["task"] in clean
    ]


def _cell(pairs: list[tuple[dict[str, Any], dict[str, Any]]]) -> dict[str, Any]:
    d = {q: [a[q] - c[q] for c, a in pairs] for q in ("s0", "s1", "g", "entropy", "p_reread")}
    d["s0_first"] = [a["s0_first"] - c["s0_first"] for c, a in pairs if "s0_first" in a]
    d_agree = [int(a["agrees_reference"]) - int(c["agrees_reference"]) for c, a in pairs]
    room = [(c, a) for c, a in pairs if c["entropy"] >= HEADROOM]
    return {
        "n": len(pairs),
        "n_ds0_pos": sum(x > _EPS for x in d["s0"]),
        "n_ds0_differs": sum(abs(x) > _EPS for x in d["s0"]),
        "n_ds0_first_pos": sum(x > _EPS for x in d["s0_first"]),
        "n_dg_pos": sum(x > _EPS for x in d["g"]),
        "n_dg_neg": sum(x < -_EPS for x in d["g"]),
        "dg": _q(d["g"]),
        "ds0": _q(d["s0"]),
        "ds0_first": _q(d["s0_first"]),
        "ds1": _q(d["s1"]),
        "dentropy": _q(d["entropy"]),
        "p_sign_dg": sign_test(d["g"]) if pairs else math.nan,
        "p_sign_ds0": sign_test(d["s0"]) if pairs else math.nan,
        "net_dagree": int(sum(d_agree)),
        "net_sgn_dp_reread": int(
            sum(np.sign([x if abs(x) > _EPS else 0.0 for x in d["p_reread"]]))
        ),
        "n_dp_reread_pos": sum(x > _EPS for x in d["p_reread"]),
        "n_dp_reread_neg": sum(x < -_EPS for x in d["p_reread"]),
        "p_sign_dp_reread": (
            sign_test([x if abs(x) > _EPS else 0.0 for x in d["p_reread"]]) if pairs else math.nan
        ),
        "leader_changes": sum(c["leading_action"] != a["leading_action"] for c, a in pairs),
        "leader_to_reread": sum(
            c["leading_action"] != a["leading_action"]
            and a["leading_action"] in ("get_order_details", "get_user_details")
            for c, a in pairs
        ),
        "headroom_n": len(room),
        "headroom_h_below": sum(a["entropy"] < HEADROOM for _, a in room),
        "headroom_leader_changes": sum(c["leading_action"] != a["leading_action"] for c, a in room),
    }


def summarize(rows: Sequence[dict[str, Any]], *, arms: Sequence[str], k_max: int) -> dict[str, Any]:
    """``{clean: {...}, cells: [{arm, k, ...}], payment_by_prefix: {...}}``."""
    clean0 = [r for r in rows if r["arm"] == "clean" and r["k"] == 0]
    cells = []
    for arm in arms:
        if arm == "clean":
            continue
        for k in range(k_max + 1):
            pairs = paired(rows, arm, k)
            if pairs:
                cells.append({"arm": arm, "k": k, **_cell(pairs)})
    by_prefix = _grouped(
        paired(rows, "falsified_payment", 0), "payment_in_prefix", ("in_prefix", "not_in_prefix")
    )
    by_policy = _grouped(
        paired(rows, "falsified_status", 0),
        "policy_mediated",
        ("policy_mediated", "not_policy_mediated"),
    )
    return {
        "clean": {
            "n": len(clean0),
            "n_g_negative": sum(r["g"] < 0 for r in clean0),
            "entropy": _q([r["entropy"] for r in clean0]),
            "n_entropy_below_headroom": sum(r["entropy"] < HEADROOM for r in clean0),
            "p_unrecognised": _q([r["p_unrecognised"] for r in clean0 if "p_unrecognised" in r]),
            "n_p_reread_above_099": sum(r["p_reread"] > 0.99 for r in clean0),
            "n_p_reread_below_001": sum(r["p_reread"] < 0.01 for r in clean0),
            "agreement_by_k": {
                str(k): _rate([r for r in rows if r["arm"] == "clean" and r["k"] == k])
                for k in range(k_max + 1)
            },
        },
        "cells": cells,
        "falsified_payment_by_prefix": by_prefix,
        "falsified_status_by_policy": by_policy,
        "s0_separation": {
            "per_token": _separation(paired(rows, "failed", 0), rows, "s0"),
            "first_token": _separation(paired(rows, "failed", 0), rows, "s0_first"),
        },
    }


def _grouped(
    pairs: list[tuple[dict[str, Any], dict[str, Any]]], flag: str, names: tuple[str, str]
) -> dict[str, Any]:
    """Rows split by a boolean row field: ``n``, ``n_dg_pos`` and the sign test in each
    group (``names`` are the keys for true and false)."""
    out: dict[str, Any] = {}
    for value, name in zip((True, False), names, strict=True):
        sub = [(c, a) for c, a in pairs if bool(a.get(flag)) is value]
        dg = [a["g"] - c["g"] for c, a in sub]
        out[name] = {
            "n": len(sub),
            "n_dg_pos": sum(x > _EPS for x in dg),
            "p_sign_dg": sign_test(dg) if dg else math.nan,
        }
    return out


def _separation(
    failed: list[tuple[dict[str, Any], dict[str, Any]]], rows: Sequence[dict[str, Any]], key: str
) -> dict[str, Any]:
    """Does the failed arm reach a region of the S0 axis no other arm enters? ``dS0``
    of the failed rows against the other non-clean arms' ``dS0`` at the site (``key``
    is ``s0``, the per-token mean, or ``s0_first``, the first token alone)."""
    f = [a[key] - c[key] for c, a in failed if key in a]
    others: list[float] = []
    for arm in sorted({r["arm"] for r in rows} - {"clean", "failed"}):
        others += [a[key] - c[key] for c, a in paired(rows, arm, 0) if key in a]
    if not f:
        return {"n_failed": 0, "n_others": len(others)}
    lo = min(f)
    return {
        "n_failed": len(f),
        "n_failed_pos": sum(x > _EPS for x in f),
        "failed_min": lo,
        "n_others": len(others),
        "others_max": max(others) if others else math.nan,
        "n_others_inside": sum(x >= lo for x in others),
    }


def _rate(rows: list[dict[str, Any]]) -> float:
    return float(np.mean([r["agrees_reference"] for r in rows])) if rows else math.nan


def table_rows(summary: dict[str, Any]) -> tuple[list[str], list[list[Any]]]:
    """Table I as header + rows: one row per (arm, k)."""
    header = [
        "arm", "k", "n", "dS0>0", "dS0!=0", "dG>0", "median dG [IQR]", "p(sign dG)",
        "sum dA", "net sgn dpi(V)", "leader changes", "median dH",
    ]  # fmt: skip
    out = []
    for c in summary["cells"]:
        dg = c["dg"]
        out.append(
            [
                c["arm"], c["k"], c["n"], f"{c['n_ds0_pos']}/{c['n']}", f"{c['n_ds0_differs']}/{c['n']}",
                f"{c['n_dg_pos']}/{c['n']}",
                f"{dg['median']:+.3f} [{dg['q25']:+.3f}, {dg['q75']:+.3f}]",
                _fmt_p(c["p_sign_dg"]), f"{c['net_dagree']:+d}", f"{c['net_sgn_dp_reread']:+d}",
                c["leader_changes"], f"{c['dentropy']['median']:+.4f}",
            ]
        )  # fmt: skip
    return header, out


def _fmt_p(p: float) -> str:
    return "n/a" if p is None or (isinstance(p, float) and math.isnan(p)) else f"{p:.3g}"


def figures(rows: Sequence[dict[str, Any]], summary: dict[str, Any]) -> list[tuple[str, Any]]:
    """Figure 1 (site: dS0 vs dG; dH; dpi(V) vs clean level) and Figure 2 (over k; only
    when the run read calls after the site: one k is a column of points, not a curve)."""
    import matplotlib
    from matplotlib.ticker import MaxNLocator

    from toolaudit.report import new_figure

    arms = sorted({c["arm"] for c in summary["cells"]}, key=lambda a: a)
    colors = dict(zip(arms, matplotlib.rcParams["axes.prop_cycle"].by_key()["color"], strict=False))
    fig1, ax = new_figure(ncols=3, figsize=(13, 3.8))
    fig1.set_layout_engine("constrained")  # axis labels never run into the next panel
    for arm in arms:
        pairs = paired(rows, arm, 0)
        ds0 = [a["s0"] - c["s0"] for c, a in pairs]
        dg = [a["g"] - c["g"] for c, a in pairs]
        ax[0].scatter(ds0, dg, s=14, label=arm, color=colors[arm], alpha=0.8)
        dh = [a["entropy"] - c["entropy"] for c, a in pairs]
        ax[1].scatter([arms.index(arm)] * len(dh), dh, s=14, color=colors[arm], alpha=0.8)
        ax[2].scatter(
            [c["p_reread"] for c, _ in pairs],
            [a["p_reread"] - c["p_reread"] for c, a in pairs],
            s=14, color=colors[arm], alpha=0.8,
        )  # fmt: skip
    for a in (ax[0].set_xscale, ax[0].set_yscale):
        a("symlog", linthresh=0.05)
    ax[0].axhline(0, color="grey", lw=0.5)
    ax[0].axvline(0, color="grey", lw=0.5)
    ax[0].set(xlabel="dS0 (nats/token)", ylabel="dG (nats/token)", title="(a) at the site")
    ax[0].legend(fontsize=7)
    ax[1].set_xticks(range(len(arms)), arms, rotation=20, fontsize=7)
    ax[1].set(ylabel="dH (nats)", title="(b) action entropy", ylim=(-math.log(17), math.log(17)))
    ax[2].set(xlabel="clean pi(V)", ylabel="d pi(V)", title="(c) mass on re-reading tools")
    ax[2].xaxis.set_major_locator(MaxNLocator(nbins=4))  # readable even over a narrow range
    ax[2].ticklabel_format(axis="x", style="plain", useOffset=False)
    site = (
        "Figure 1: paired readings at the injection site, each arm against its clean row.",
        fig1,
    )
    if len({c["k"] for c in summary["cells"]}) < 2:
        return [site]
    fig2, bx = new_figure(ncols=3, figsize=(13, 3.8))
    fig2.set_layout_engine("constrained")
    for arm in arms:
        cells = [c for c in summary["cells"] if c["arm"] == arm]
        ks = [c["k"] for c in cells]
        med = [c["dg"]["median"] for c in cells]
        bx[0].plot(ks, med, marker="o", label=arm, color=colors[arm])
        if arm == "failed":
            bx[0].fill_between(ks, [c["dg"]["q25"] for c in cells], [c["dg"]["q75"] for c in cells],
                               color=colors[arm], alpha=0.2)  # fmt: skip
        bx[1].plot(ks, [c["net_dagree"] for c in cells], marker="o", color=colors[arm])
        bx[2].plot(ks, [c["net_sgn_dp_reread"] for c in cells], marker="o", color=colors[arm])
    bx[0].set_yscale("symlog", linthresh=0.01)
    bx[0].set(xlabel="k (calls after the site)", ylabel="median dG", title="(a) likelihood gap")
    bx[1].set(xlabel="k", ylabel="sum dA", title="(b) agreement with reference")
    bx[2].set(xlabel="k", ylabel="tasks up - down", title="(c) net sgn d pi(V)")
    bx[0].legend(fontsize=7)
    for b in bx:
        b.axhline(0, color="grey", lw=0.5)
        b.xaxis.set_major_locator(MaxNLocator(integer=True))
    return [
        site,
        ("Figure 2: paired readings along the trajectory (k = calls after the site).", fig2),
    ]

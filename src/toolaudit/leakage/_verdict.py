"""The verdict: which case the data is in, decided from bootstrap intervals.

Rule (documented in docs/leakage.md). ``above chance`` means the 95% bootstrap interval
of the AUROC lies above 0.5; ``reliably above X`` means the paired bootstrap interval of
``AUROC(a) - AUROC(X)`` (same evaluation rows, same resamples) lies above 0.

* ``localized``: a tool scope (or the prefix lookup of a token class) is above chance
  and reliably above the full trace in the same feature set. The carrier is the
  candidate with the largest lower bound of that difference.
* ``distributed``: the full trace is above chance and reliably above every single tool
  in the same feature set.
* ``none``: no scope, prefix lookup or presence control is above chance.
* ``inconclusive``: anything else (something is above chance, but neither of the two
  patterns is reliable).

The presence control (a classifier on which tools were called and how often) *explains*
the full-trace signal when it is above chance and the full trace is not reliably above it.
The sentences that state the verdict are in ``_wording``.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from toolaudit.report import Finding
from toolaudit.stats import bootstrap_auroc, paired_bootstrap_auroc_delta

logger = logging.getLogger(__name__)

VERDICT_KINDS = ("localized", "distributed", "none", "inconclusive")


@dataclass(frozen=True, slots=True)
class ScoredScope:
    """A scored scope on the evaluation rows: its AUROC, interval and scores."""

    scope: str
    features: str
    auroc: float
    ci95: tuple[float, float]
    scores: np.ndarray


def _above(ci: tuple[float, float] | Sequence[float | None] | None) -> bool:
    if ci is None:
        return False
    lo = ci[0]
    return lo is not None and not np.isnan(lo) and lo > 0.5


def _delta(
    y: np.ndarray, a: np.ndarray, b: np.ndarray, n_boot: int, seed: int, level: float
) -> dict[str, Any]:
    ok = ~(np.isnan(a) | np.isnan(b))
    iv = paired_bootstrap_auroc_delta(y[ok], a[ok], b[ok], n_boot=n_boot, seed=seed, level=level)
    return {"delta": iv.estimate, "ci": [iv.low, iv.high], "level": level}


def _adjusted(s: ScoredScope, y: np.ndarray, n_boot: int, seed: int, level: float) -> ScoredScope:
    ok = ~np.isnan(s.scores)
    iv = bootstrap_auroc(y[ok], s.scores[ok], n_boot=n_boot, seed=seed, level=level)
    return ScoredScope(s.scope, s.features, s.auroc, (iv.low, iv.high), s.scores)


def _reliably_positive(d: dict[str, Any]) -> bool:
    lo = d["ci"][0]
    return lo is not None and not np.isnan(lo) and lo > 0.0


def decide(
    scoped: Sequence[ScoredScope],
    y_eval: np.ndarray,
    *,
    prefix: ScoredScope | None,
    prefix_class: str | None,
    carrier_class: str | None,
    presence: ScoredScope | None,
    n_boot: int,
    seed: int,
) -> Finding:
    """The ``leakage.verdict`` finding (see the module docstring for the rule).

    Every interval here is family-wise: Bonferroni over the m intervals the rule looks
    at (each scope, the prefix lookup, the presence control), so on label-free data the
    chance that any of them excludes 0.5 stays near 5%.
    """
    m = len(scoped) + (prefix is not None) + (presence is not None)
    level = 1.0 - 0.05 / max(m, 1)

    def adj(s: ScoredScope) -> ScoredScope:
        return _adjusted(s, y_eval, n_boot, seed, level)

    scoped = [adj(s) for s in scoped]
    prefix = adj(prefix) if prefix is not None else None
    presence = adj(presence) if presence is not None else None
    feats = list(dict.fromkeys(s.features for s in scoped))
    full = {s.features: s for s in scoped if s.scope == "full"}
    tools = [s for s in scoped if s.scope != "full"]
    comparisons: list[dict[str, Any]] = []
    localized: list[tuple[float, dict[str, Any]]] = []  # (lower bound, evidence row)
    distributed: list[tuple[float, str]] = []
    for f in feats:
        base = full.get(f)
        if base is None:
            continue
        all_below = bool(tools)
        for t in (s for s in tools if s.features == f):
            d = _delta(y_eval, t.scores, base.scores, n_boot, seed, level)
            row: dict[str, Any] = {
                "scope": t.scope,
                "features": f,
                "auroc": t.auroc,
                "ci": list(t.ci95),
            }
            comparisons.append({**row, "minus_full": d})
            if _above(t.ci95) and _reliably_positive(d):
                localized.append((d["ci"][0], row))
            neg = {"delta": -d["delta"], "ci": [-d["ci"][1], -d["ci"][0]]}
            all_below &= _reliably_positive(neg)
        if _above(base.ci95) and all_below:
            distributed.append((base.auroc, f))
    prefix_info: dict[str, Any] | None = None
    if prefix is not None:
        f0 = "char_wb_3_5" if "char_wb_3_5" in full else (feats[0] if feats else None)
        base = full.get(f0) if f0 else None
        pd = _delta(y_eval, prefix.scores, base.scores, n_boot, seed, level) if base else None
        prefix_info = {
            "class": prefix_class,
            "chars": prefix.features,
            "auroc": prefix.auroc,
            "ci": list(prefix.ci95),
            "minus_full": pd,
            "full_features": f0,
        }
        if pd is not None and _above(prefix.ci95) and _reliably_positive(pd):
            localized.append(
                (
                    pd["ci"][0],
                    {
                        "scope": prefix.scope,
                        "features": f"prefix {prefix.features}",
                        "auroc": prefix.auroc,
                        "ci": list(prefix.ci95),
                        "class": prefix_class,
                    },
                )
            )
    presence_info = _presence(presence, full, y_eval, n_boot, seed, level)
    any_above = any(_above(s.ci95) for s in scoped) or (prefix is not None and _above(prefix.ci95))
    any_above_all = any_above or (presence is not None and _above(presence.ci95))
    best_full = max(full.values(), key=lambda s: np.nan_to_num(s.auroc, nan=0.0), default=None)
    details: dict[str, Any] = {
        "family_level": level,
        "comparisons_m": m,
        "comparisons": comparisons,
        "prefix": prefix_info,
        "presence": presence_info,
        "full": {
            f: {"auroc": s.auroc, "ci": list(s.ci95), "above_chance": _above(s.ci95)}
            for f, s in full.items()
        },
    }
    if localized:
        lo, row = max(localized, key=lambda kv: (kv[0], kv[1]["auroc"]))
        details["carrier_class"] = row.get("class") or carrier_class
        details["features"] = row["features"]
        details["minus_full_low"] = lo
        details["candidates"] = [r for _, r in sorted(localized, key=lambda kv: -kv[0])]
        ci = row["ci"]
        return Finding(
            name="leakage.verdict",
            verdict="localized",
            value=float(row["auroc"]),
            interval=(ci[0], ci[1]),
            level=level,
            test="paired stratified bootstrap of AUROC(scope) - AUROC(full trace), "
            f"Bonferroni over {m} intervals",
            n=int(y_eval.size),
            subject=str(row["scope"]),
            details=details,
        )
    if distributed:
        auc, f = max(distributed)
        s = full[f]
        best_tool = max(
            (t for t in tools if t.features == f),
            key=lambda t: np.nan_to_num(t.auroc, nan=0.0),
            default=None,
        )
        details["features"] = f
        details["best_tool"] = (
            {"scope": best_tool.scope, "auroc": best_tool.auroc} if best_tool else None
        )
        return Finding(
            name="leakage.verdict",
            verdict="distributed",
            value=s.auroc,
            interval=s.ci95,
            level=level,
            test="paired stratified bootstrap of AUROC(full trace) - AUROC(each tool), "
            f"Bonferroni over {m} intervals",
            n=int(y_eval.size),
            subject="full",
            details=details,
        )
    kind = "inconclusive" if any_above_all else "none"
    top = max(
        [*scoped, *([prefix] if prefix else []), *([presence] if presence else [])],
        key=lambda s: np.nan_to_num(s.ci95[0], nan=0.0),
        default=best_full,
    )
    # a prefix lookup's features ("2 char") named as such, as in the candidates
    details["features"] = (
        None if top is None else f"prefix {top.features}" if top is prefix else top.features
    )
    return Finding(
        name="leakage.verdict",
        verdict=kind,
        value=top.auroc if top else None,
        interval=top.ci95 if top else None,
        level=level,
        test=f"stratified bootstrap interval of each AUROC against 0.5, Bonferroni over {m}",
        n=int(y_eval.size),
        subject=top.scope if top else None,
        details=details,
    )


def _presence(
    presence: ScoredScope | None,
    full: dict[str, ScoredScope],
    y_eval: np.ndarray,
    n_boot: int,
    seed: int,
    level: float,
) -> dict[str, Any] | None:
    if presence is None:
        return None
    base = max(full.values(), key=lambda s: np.nan_to_num(s.auroc, nan=0.0), default=None)
    info: dict[str, Any] = {
        "auroc": presence.auroc,
        "ci": list(presence.ci95),
        "above_chance": _above(presence.ci95),
    }
    if base is None:
        info["explains_full"] = False
        return info
    d = _delta(y_eval, base.scores, presence.scores, n_boot, seed, level)
    info["full_features"] = base.features
    info["full_minus_presence"] = d
    info["explains_full"] = bool(
        _above(presence.ci95) and _above(base.ci95) and not _reliably_positive(d)
    )
    return info

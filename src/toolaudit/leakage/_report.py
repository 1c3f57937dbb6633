"""Report sections for the leakage audit and ``leakage.json``."""

from __future__ import annotations

import logging
import math
from typing import Any

from toolaudit.leakage._beside_seed import seed_blocks
from toolaudit.leakage._wording import (
    below_chance_note,
    outcome_note,
    rule_intervals,
    verdict_sentence,
)
from toolaudit.report import Finding, Section, text_colour

logger = logging.getLogger(__name__)

_FEATURE_ORDER = ("word_1_2", "char_wb_2_5", "char_wb_3_5")


def _features(payload: dict[str, Any]) -> list[str]:
    seen = list(dict.fromkeys(r["features"] for r in payload["scopes"]))
    return [f for f in _FEATURE_ORDER if f in seen] + [f for f in seen if f not in _FEATURE_ORDER]


Intervals = dict[tuple[str, str], tuple[Any, Any]]


def _cell(row: dict[str, Any] | None, intervals: Intervals | None = None) -> str:
    """``AUROC [low, high]`` with the verdict rule's family-wise interval when it has
    one (``intervals``), else the row's own 95% interval."""
    if row is None or row["auroc"] is None:
        return "undefined"
    lo, hi = (intervals or {}).get((row["scope"], row["features"]), row["ci95"])
    if lo is None or hi is None:
        return f"{row['auroc']:.3f}"
    return f"{row['auroc']:.3f} [{lo:.3f}, {hi:.3f}]"


def _auroc(x: Any) -> Any:
    """An AUROC cell: ``undefined`` where there is none (null in leakage.json, NaN before
    it is written), so the table reads the same from the run and from its file."""
    return x if _defined(x) else "undefined"


def _figure(width: float, height: float) -> Any:
    # the object-oriented API only: no global backend switch for notebook users;
    # constrained layout, so text enlarged for legibility is laid out again
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height), layout="constrained")


def _bar_chart(payload: dict[str, Any], intervals: Intervals | None) -> Any:
    """Horizontal bars, one row of bars per scope (its name written level, legible at
    any count), the interval the table shows as error bars, and 0.5 marked."""
    import numpy as np

    feats = _features(payload)
    scopes = list(dict.fromkeys(r["scope"] for r in payload["scopes"]))
    index = {(r["scope"], r["features"]): r for r in payload["scopes"]}
    fig = _figure(9.0, 1.1 + 0.15 * len(scopes) * max(len(feats), 1) + 0.1 * len(scopes))
    ax = fig.subplots()
    height = 0.8 / max(len(feats), 1)
    for j, f in enumerate(feats):
        vals, lows, highs = [], [], []
        for s in scopes:
            r = index.get((s, f))
            a = r["auroc"] if r and r["auroc"] is not None else np.nan
            lo, hi = (intervals or {}).get((s, f), (r or {}).get("ci95") or [None, None])
            vals.append(a)
            lows.append(a - lo if lo is not None else 0.0)
            highs.append(hi - a if hi is not None else 0.0)
        y = np.arange(len(scopes)) + (j - (len(feats) - 1) / 2) * height
        ax.barh(y, vals, height, xerr=[lows, highs], capsize=2, label=f)
    ax.axvline(0.5, color="grey", lw=0.8, ls="--")
    ax.set_yticks(np.arange(len(scopes)), scopes, fontsize=9)
    ax.invert_yaxis()  # the table's order, top to bottom
    ax.set_xlabel("AUROC (evaluation rows)", fontsize=9)
    ax.set_xlim(0.0, 1.0)
    ax.tick_params(axis="x", labelsize=9)
    # above the bars, so that it hides none of them
    ax.legend(fontsize=9, loc="lower left", bbox_to_anchor=(0.0, 1.0), ncol=len(feats),
              frameon=False)  # fmt: skip
    return fig


def _roc_chart(roc: dict[str, Any]) -> Any:
    fig = _figure(4.2, 4.0)
    ax = fig.subplots()
    for c in roc["curves"]:
        label = "full trace" if c["scope"] == "full" else f"best tool: {c['scope']}"
        ax.plot(c["fpr"], c["tpr"], label=label)
    ax.plot([0, 1], [0, 1], color="grey", lw=0.8, ls="--")
    ax.set_xlabel("false positive rate", fontsize=9)
    ax.set_ylabel("true positive rate", fontsize=9)
    ax.tick_params(labelsize=9)
    ax.set_title(f"ROC ({roc['features']}, evaluation rows)", fontsize=9)
    ax.legend(fontsize=9)
    return fig


#: A heatmap with more groups than this shows only the top ones (labels stay readable).
MAX_HEATMAP_GROUPS = 20


def _defined(auroc: Any) -> bool:
    """An AUROC that exists: null in leakage.json, NaN in the result before it is written."""
    return auroc is not None and not (isinstance(auroc, float) and math.isnan(auroc))


def heatmap_groups(payload: dict[str, Any], focus: str, groups: list[str]) -> list[str]:
    """The groups the heatmap shows: all of them up to :data:`MAX_HEATMAP_GROUPS`, else
    that many, those with a defined AUROC in the most scopes first, then the largest
    (``n`` where recorded), then by name; shown in their original order."""
    if len(groups) <= MAX_HEATMAP_GROUPS:
        return groups
    scopes = [r for r in payload["scopes"] if r["features"] == focus]

    def rank(g: str) -> tuple[int, int, str]:
        cells = [r["by_group"].get(g) or {} for r in scopes]
        defined = sum(_defined(c.get("auroc")) for c in cells)
        size = max((int(c.get("n") or 0) for c in cells), default=0)
        return (-defined, -size, g)

    keep = set(sorted(groups, key=rank)[:MAX_HEATMAP_GROUPS])
    return [g for g in groups if g in keep]


def defined_groups(payload: dict[str, Any], focus: str, groups: list[str]) -> list[str]:
    """The groups with an AUROC in at least one scope of ``focus``. A group with one
    class has none anywhere, and a column of "undefined" says nothing: the per-group
    table and heatmap leave such groups out, count them in the title, and the warnings
    below the section list them."""
    scopes = [r for r in payload["scopes"] if r["features"] == focus]

    def defined(x: Any) -> bool:  # null in the JSON, NaN before it is written
        return x is not None and not (isinstance(x, float) and math.isnan(x))

    return [
        g for g in groups if any(defined((r["by_group"].get(g) or {}).get("auroc")) for r in scopes)
    ]


def _heatmap(payload: dict[str, Any], focus: str, groups: list[str]) -> Any:
    import numpy as np

    scopes = [r for r in payload["scopes"] if r["features"] == focus]
    data = np.array(
        [
            [
                np.nan
                if r["by_group"].get(g, {}).get("auroc") is None
                else r["by_group"][g]["auroc"]
                for g in groups
            ]
            for r in scopes
        ],
        dtype=float,
    )
    # at most 9 inches wide: the report never scales it down, so its text stays legible
    fig = _figure(min(9.0, 0.55 * len(groups) + 3.0), max(2.5, 0.32 * len(scopes) + 1.4))
    ax = fig.subplots()
    im = ax.imshow(np.ma.masked_invalid(data), cmap="RdBu_r", vmin=0.0, vmax=1.0, aspect="auto")
    ax.set_xticks(range(len(groups)), groups, rotation=45, ha="right", fontsize=9)
    ax.set_yticks(range(len(scopes)), [r["scope"] for r in scopes], fontsize=9)
    for i in range(data.shape[0]):
        for j in range(data.shape[1]):
            if not np.isnan(data[i, j]) and len(groups) <= 12:
                # black or white, whichever reads on this cell's colour
                colour = text_colour(im.cmap(im.norm(data[i, j])))
                ax.text(j, i, f"{data[i, j]:.2f}", ha="center", va="center", fontsize=9,
                        color=colour)  # fmt: skip
    bar = fig.colorbar(im, ax=ax)
    bar.set_label(f"AUROC ({focus})", fontsize=9)
    bar.ax.tick_params(labelsize=9)
    return fig


def _dilution_chart(dil: dict[str, Any]) -> Any:
    fig = _figure(9.0, 3.4)
    axes = fig.subplots(1, 2)
    real = dil["real"]
    xs = [p["size"] for p in real]
    ys = [p["auroc"] for p in real]
    lo = [p["ci95"][0] for p in real]
    hi = [p["ci95"][1] for p in real]
    axes[0].plot(xs, ys, marker="o")
    if all(v is not None for v in lo + hi):
        axes[0].fill_between(xs, lo, hi, alpha=0.25, label="95% bootstrap CI")
    axes[0].set_xlabel(f"tools (carrier {dil['carrier']} first)", fontsize=9)
    axes[0].set_title("real-tool subset sweep", fontsize=9)
    pts = dil["synthetic"]["points"]
    if pts:
        ks = [p["k"] for p in pts]
        axes[1].plot(ks, [p["mean"] for p in pts], marker="o", label="mean over seeds")
        axes[1].fill_between(
            ks, [p["min"] for p in pts], [p["max"] for p in pts], alpha=0.25, label="min-max"
        )
        axes[1].legend(fontsize=9)
    axes[1].set_xlabel("K synthetic label-independent sections", fontsize=9)
    axes[1].set_title("synthetic additions", fontsize=9)
    for ax in axes:
        ax.axhline(0.5, color="grey", lw=0.8, ls="--")
        ax.set_ylabel(f"AUROC ({dil['features']})", fontsize=9)
        ax.tick_params(labelsize=9)
    return fig


def leakage_sections(
    payload: dict[str, Any], *, title: str = "Leakage audit (PT2D)"
) -> list[Section]:
    """Report sections from a ``leakage.json`` payload."""
    sec = Section(title)
    feats = _features(payload)
    scopes = list(dict.fromkeys(r["scope"] for r in payload["scopes"]))
    index = {(r["scope"], r["features"]): r for r in payload["scopes"]}
    part = payload.get("partition", {})
    verdict = payload.get("verdict") or {}
    finding = Finding.model_validate(verdict["evidence"]) if verdict.get("evidence") else None
    intervals = rule_intervals(finding.details) if finding is not None else {}
    if finding is not None:
        sec.text(verdict_sentence(finding))
        below = below_chance_note(finding)
        if below:
            sec.text(below)
        if (payload.get("data") or {}).get("label_source") == "reward":
            sec.text(outcome_note(finding))
    views = (payload.get("data") or {}).get("view") or []
    if views:
        n = (payload.get("data") or {}).get("examples", "?")
        sec.text(
            f"The verdict rests on the {n} runs of the input; open their transcripts with "
            + " and ".join(f"`{v}`" for v in views)
            + "; the top n-grams table below names the first runs that hold each n-gram."
        )
    level = finding.details.get("family_level") if finding is not None else None
    m = finding.details.get("comparisons_m") if finding is not None else None
    if intervals and isinstance(level, float):
        ci_words = (
            f"the family-wise 95% interval the verdict rule reads (stratified bootstrap at "
            f"{level:.2%} each, Bonferroni over its {m} intervals, so that all of them "
            "hold together 95% of the time)"
        )
        caption = f"AUROC by scope and feature set [family-wise 95% CI, {level:.2%} each]"
    else:
        ci_words = "a stratified bootstrap 95% interval"
        caption = "AUROC by scope and feature set [95% CI]"
    sec.text(
        f"Partition: {part.get('description', '?')}. Each scope (the full trace and every "
        "tool section) gets TF-IDF features and a balanced logistic regression; the table "
        f"shows its evaluation AUROC (the scope AUROC) with {ci_words}. The verdict rule "
        "(docs/leakage.md) reads these intervals: a tool above chance and reliably above "
        "the full trace (the paired difference's interval above 0) is localized, a full "
        "trace above chance and reliably above every tool is distributed."
    )
    sec.table(
        caption,
        ["scope", *feats],
        [[s, *[_cell(index.get((s, f)), intervals) for f in feats]] for s in scopes],
    )
    focus = "char_wb_3_5" if "char_wb_3_5" in feats else feats[0]
    all_groups = sorted({g for r in payload["scopes"] for g in r["by_group"]})
    group_names = defined_groups(payload, focus, all_groups)
    one_class = len(all_groups) - len(group_names)
    sec.table(
        f"AUROC per group ({focus}); undefined where a group has one class"
        + (f"; {one_class} groups undefined in every scope left out" if one_class else ""),
        ["scope", "all", *group_names],
        [
            [
                s,
                _auroc(index[(s, focus)]["auroc"]),
                *[
                    _auroc(index[(s, focus)]["by_group"].get(g, {}).get("auroc"))
                    for g in group_names
                ],
            ]
            for s in scopes
            if (s, focus) in index
        ],
    )
    sec.figure(
        "AUROC by scope and feature set (error bars: the table's "
        + ("family-wise 95% CI" if intervals else "95% CI")
        + "; dashed: chance, 0.5)",
        _bar_chart(payload, intervals),
    )
    if group_names:
        shown = heatmap_groups(payload, focus, group_names)
        rest = len(group_names) - len(shown)
        sec.figure(
            f"AUROC per evaluation group ({focus}; blank where a group has one class)"
            + (f"; the {len(shown)} groups scored in the most scopes (largest first), "
               f"{rest} more in the table above" if rest else ""),
            _heatmap(payload, focus, shown),
        )  # fmt: skip
    roc = payload.get("roc")
    if roc and roc.get("curves"):
        sec.figure("ROC curves: best tool against the full trace", _roc_chart(roc))
    _presence_block(sec, payload, finding)
    _provenance_blocks(sec, payload, finding)
    dil = payload.get("dilution")
    if dil:
        sec.table(
            f"Dilution, real-tool subset sweep ({dil['features']})",
            ["tools", "|S|", "AUROC", "95% CI (this row alone)"],
            [
                ["{" + ", ".join(p["tools"]) + "}", p["size"], p["auroc"], p["ci95"]]
                for p in dil["real"]
            ],
        )
        syn = dil["synthetic"]
        sec.table(
            f"Dilution, label-independent synthetic additions (pool: {', '.join(syn['pool_tools'])};"
            f" {syn['pool_size']} sections, mean length {syn['pool_mean_length']:.0f})",
            ["K", "mean", "sd", "min", "max"],
            [[p["k"], p["mean"], p["sd"], p["min"], p["max"]] for p in syn["points"]],
        )
        sec.figure(
            "Dilution curves (left: 95% CI band; right: min-max over seeds)", _dilution_chart(dil)
        )
    seed_blocks(sec, payload)
    for w in payload.get("warnings", []):
        sec.text(f"Warning: {w}")
    return [sec]


def _presence_block(sec: Section, payload: dict[str, Any], finding: Finding | None) -> None:
    pres = payload.get("presence_control")
    if not pres:
        return
    if pres.get("skipped"):
        sec.text(f"Presence control skipped: {pres['skipped']}.")
        return
    info = (finding.details.get("presence") if finding else None) or {}
    diff = info.get("full_minus_presence") or {}
    # the intervals the verdict rule read (family-wise), as the verdict sentence states
    family = bool(info.get("ci"))
    label = "family-wise 95% CI" if family else "95% CI"
    full = f"full trace ({info['full_features']})" if info.get("full_features") else "full trace"
    sec.table(
        "Presence control: the same classifier on which tools were called and how often",
        ["features", "presence-control AUROC", label, f"{full} minus presence",
         "family-wise 95% CI"],
        [[pres["n_features"], pres["auroc"], info.get("ci") if family else pres["ci95"],
          diff.get("delta"), diff.get("ci")]],
    )  # fmt: skip


def _provenance_blocks(sec: Section, payload: dict[str, Any], finding: Finding | None) -> None:
    prov = payload.get("provenance") or {}
    rows = payload["scopes"]
    tools = [r for r in rows if r["scope"] != "full" and r["auroc"] is not None]
    if tools:
        best = max(tools, key=lambda r: r["auroc"])
        feats = [
            e
            for e in prov.get("features", [])
            if e["scope"] == best["scope"] and e["features"] == best["features"]
        ]
        sec.table(
            f"Top n-grams of {best['scope']} ({best['features']}, scope AUROC {best['auroc']:.3f})",
            ["direction", "n-gram", "weight", "field", "context", "in runs (first 3)"],
            [
                [
                    e["direction"],
                    repr(e["term"]),
                    e["weight"],
                    (e["fields"][0]["tool"] + ": " + e["fields"][0]["field"])
                    if e["fields"]
                    else "—",
                    e["contexts"][0] if e["contexts"] else "—",
                    ", ".join(e.get("example_ids") or []) or "—",
                ]
                for e in sorted(feats, key=lambda e: -abs(e["weight"]))[:16]
            ],
        )
    classes = prov.get("classes", [])
    if classes:
        sec.table(
            "Candidate token classes (input for the redaction audit)",
            ["class", "pattern", "support", "distinct", "score", "same values as"],
            [
                [
                    c["name"],
                    c["pattern"],
                    c["support"],
                    c["distinct_values"],
                    c["score"],
                    ", ".join(c["same_values_as"]) or "—",
                ]
                for c in classes
            ],
        )
    pl = payload.get("prefix_lookup")
    if pl and pl.get("skipped"):
        sec.text(f"Prefix lookup skipped: {pl['skipped']}.")
    elif pl:
        groups = sorted({g for r in pl["rows"] for g in r["by_group"]})
        # the verdict rule reads one prefix length, with a family-wise interval
        rule = (finding.details.get("prefix") if finding is not None else None) or {}
        sec.table(
            f"Prefix lookup for {pl['class']} (pattern {pl['pattern']}): prefix-lookup "
            "AUROC, a lookup table on the value's first characters",
            ["prefix", "all", "95% CI (this row alone)", "family-wise 95% CI (verdict rule)",
             *groups],
            [
                [
                    f"{r['chars']} char",
                    r["auroc"],
                    r["ci95"],
                    rule.get("ci") if rule.get("chars") == f"{r['chars']} char" else None,
                    *[r["by_group"][g]["auroc"] for g in groups],
                ]
                for r in pl["rows"]
            ],
        )  # fmt: skip

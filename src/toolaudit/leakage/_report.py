"""Report sections for the leakage audit, ``leakage.json``, and the demo hook."""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

from toolaudit.report import Section, run_metadata, write_results

logger = logging.getLogger(__name__)

ProgressFn = Callable[[int, int, str], None]
_FEATURE_ORDER = ("word_1_2", "char_wb_2_5", "char_wb_3_5")
_DEMO_SCALE = 0.05


def write_leakage(out_dir: str | Path, payload: dict[str, Any], *, meta: dict[str, Any]) -> Path:
    """Write ``out_dir/leakage.json`` (``payload`` plus ``meta``)."""
    return write_results(Path(out_dir) / "leakage.json", {**payload, "meta": meta})


def _features(payload: dict[str, Any]) -> list[str]:
    seen = list(dict.fromkeys(r["features"] for r in payload["scopes"]))
    return [f for f in _FEATURE_ORDER if f in seen] + [f for f in seen if f not in _FEATURE_ORDER]


def _cell(row: dict[str, Any] | None) -> str:
    if row is None or row["auroc"] is None:
        return "undefined"
    lo, hi = row["ci95"]
    if lo is None:
        return f"{row['auroc']:.3f}"
    return f"{row['auroc']:.3f} [{lo:.3f}, {hi:.3f}]"


def _bar_chart(payload: dict[str, Any]) -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    feats = _features(payload)
    scopes = list(dict.fromkeys(r["scope"] for r in payload["scopes"]))
    index = {(r["scope"], r["features"]): r for r in payload["scopes"]}
    fig, ax = plt.subplots(figsize=(max(6.0, 1.3 * len(scopes)), 3.6))
    width = 0.8 / max(len(feats), 1)
    for j, f in enumerate(feats):
        vals, lows, highs = [], [], []
        for s in scopes:
            r = index.get((s, f))
            a = r["auroc"] if r and r["auroc"] is not None else np.nan
            lo, hi = (r["ci95"] if r else [None, None]) or [None, None]
            vals.append(a)
            lows.append(a - lo if lo is not None else 0.0)
            highs.append(hi - a if hi is not None else 0.0)
        x = np.arange(len(scopes)) + (j - (len(feats) - 1) / 2) * width
        ax.bar(x, vals, width, yerr=[lows, highs], capsize=2, label=f)
    ax.axhline(0.5, color="grey", lw=0.8, ls="--")
    ax.set_xticks(np.arange(len(scopes)))
    ax.set_xticklabels(scopes, rotation=20, ha="right", fontsize=8)
    ax.set_ylabel("AUROC (eval)")
    ax.set_ylim(0.3, 1.0)
    ax.legend(fontsize=8)
    return fig


def _dilution_chart(dil: dict[str, Any]) -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(9.0, 3.4))
    real = dil["real"]
    xs = [p["size"] for p in real]
    ys = [p["auroc"] for p in real]
    lo = [p["ci95"][0] for p in real]
    hi = [p["ci95"][1] for p in real]
    axes[0].plot(xs, ys, marker="o")
    if all(v is not None for v in lo + hi):
        axes[0].fill_between(xs, lo, hi, alpha=0.25, label="95% bootstrap CI")
    axes[0].set_xlabel(f"tools (carrier {dil['carrier']} first)")
    axes[0].set_title("real-tool subset sweep", fontsize=9)
    pts = dil["synthetic"]["points"]
    if pts:
        ks = [p["k"] for p in pts]
        axes[1].plot(ks, [p["mean"] for p in pts], marker="o", label="mean over seeds")
        axes[1].fill_between(
            ks, [p["min"] for p in pts], [p["max"] for p in pts], alpha=0.25, label="min-max"
        )
        axes[1].legend(fontsize=8)
    axes[1].set_xlabel("K synthetic label-independent sections")
    axes[1].set_title("synthetic additions", fontsize=9)
    for ax in axes:
        ax.axhline(0.5, color="grey", lw=0.8, ls="--")
        ax.set_ylabel(f"AUROC ({dil['features']})")
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
    sec.text(
        f"Partition: {part.get('description', '?')}. Each scope (the full trace and every "
        "tool section) gets TF-IDF features and a balanced logistic regression; the table "
        "shows evaluation AUROC with a stratified bootstrap 95% interval. A tool well "
        "above the full trace points to a shortcut that concatenation dilutes."
    )
    sec.table(
        "AUROC by scope and feature set [95% CI]",
        ["scope", *feats],
        [[s, *[_cell(index.get((s, f))) for f in feats]] for s in scopes],
    )
    focus = "char_wb_3_5" if "char_wb_3_5" in feats else feats[0]
    group_names = sorted({g for r in payload["scopes"] for g in r["by_group"]})
    sec.table(
        f"AUROC per group ({focus}); undefined where a group has one class",
        ["scope", "all", *group_names],
        [
            [
                s,
                index[(s, focus)]["auroc"],
                *[index[(s, focus)]["by_group"].get(g, {}).get("auroc") for g in group_names],
            ]
            for s in scopes
            if (s, focus) in index
        ],
    )
    sec.figure("AUROC by scope and feature set (error bars: 95% CI)", _bar_chart(payload))
    _provenance_blocks(sec, payload)
    dil = payload.get("dilution")
    if dil:
        sec.table(
            f"Dilution, real-tool subset sweep ({dil['features']})",
            ["tools", "|S|", "AUROC", "95% CI"],
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
    for w in payload.get("warnings", []):
        sec.text(f"Warning: {w}")
    return [sec]


def _provenance_blocks(sec: Section, payload: dict[str, Any]) -> None:
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
            f"Top n-grams of {best['scope']} ({best['features']}, AUROC {best['auroc']:.3f})",
            ["direction", "n-gram", "weight", "field", "context"],
            [
                [
                    e["direction"],
                    repr(e["term"]),
                    e["weight"],
                    (e["fields"][0]["tool"] + ": " + e["fields"][0]["field"])
                    if e["fields"]
                    else "—",
                    e["contexts"][0] if e["contexts"] else "—",
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
    if pl:
        groups = sorted({g for r in pl["rows"] for g in r["by_group"]})
        sec.table(
            f"Prefix lookup for {pl['class']} (pattern {pl['pattern']})",
            ["prefix", "all", "95% CI", *groups],
            [
                [
                    f"{r['chars']} char",
                    r["auroc"],
                    r["ci95"],
                    *[r["by_group"][g]["auroc"] for g in groups],
                ]
                for r in pl["rows"]
            ],
        )


def demo_sections(
    out_dir: Path, *, data_root: Path | None, seed: int, progress: ProgressFn
) -> list[Section]:
    """Leakage on the controlled benchmark at demo size (``out_dir/tcr-shortcut``, scale
    0.05, generated when absent) with a reduced dilution grid; writes
    ``out_dir/leakage.json``."""
    from toolaudit.datasets import DATASET_NAME, write_tcr_shortcut
    from toolaudit.leakage._audit import DilutionConfig, LeakageConfig, run_leakage
    from toolaudit.traces import Example, read_jsonl

    data = Path(out_dir) / DATASET_NAME / "examples.jsonl"
    if not data.exists():
        write_tcr_shortcut(Path(out_dir) / DATASET_NAME, scale=_DEMO_SCALE, seed=seed)
    examples = list(read_jsonl(data, Example))
    cfg = LeakageConfig(
        seed=seed, n_boot=1000, dilution=DilutionConfig(k_values=(0, 1, 2, 5), n_seeds=2)
    )
    result = run_leakage(examples, cfg, progress=progress)
    payload = result.as_json()
    payload["data"] = {"files": [f"{DATASET_NAME}/examples.jsonl"], "examples": len(examples)}
    meta = run_metadata(command="toolaudit demo (leakage)", seed=seed, config=cfg.as_json())
    write_leakage(out_dir, payload, meta=meta)
    sections = leakage_sections(payload, title="Leakage audit (PT2D) on the controlled benchmark")
    sections[0].blocks.insert(
        0,
        f"Demo size: {len(examples)} examples (scale {_DEMO_SCALE}); at this size the test "
        "split has few positives, so intervals are wide. At the seed's size the planted "
        "identifier in thermompnn_ddg stands out with character features (see docs/leakage.md).",
    )
    return sections

"""Redaction results across training seeds: each figure of the seed's Table 8 as the mean
and spread over models trained with different seeds on the same data, each run's own
interval kept, and a verdict per token class that says whether it holds on every seed.

Runs are grouped by the data they scored (the SHA-256 ``redaction.json`` records for its
input), so one call can summarise several datasets (the controlled benchmark at several
shortcut strengths). A no-evidence baseline (a model trained without the tool trace,
``models train-controlled --no-trace``) joins the group whose data its ``training.json``
names. Reads result files only: no model is called.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from toolaudit.errors import DataError

#: Verdicts per token class across seeds.
DROPS, NO_DROP, MIXED = "drops on every seed", "no drop on any seed", "differs across seeds"
#: The verdict where no seed's model learned anything to remove.
NOT_TESTABLE = "not testable: the original is at chance on every seed"


def _read(path: Path, name: str) -> dict[str, Any]:
    file = path / name if path.is_dir() else path
    if not file.is_file():
        raise DataError(f"{file}: not found (expected {name})")
    try:
        doc = json.loads(file.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise DataError(f"{file}: not JSON ({exc.msg}, line {exc.lineno})") from None
    if not isinstance(doc, dict):
        raise DataError(f"{file}: expected a JSON object")
    return doc


def _label(path: Path) -> str:
    """A run's path as the user gave it, relative to the working folder where it is under it."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def _spread(values: Sequence[float | None]) -> dict[str, Any]:
    """Mean, sample standard deviation, minimum and maximum of the defined values."""
    xs = [float(v) for v in values if v is not None and not math.isnan(float(v))]
    if not xs:
        return {"n": 0, "mean": None, "sd": None, "min": None, "max": None}
    mean = sum(xs) / len(xs)
    sd = math.sqrt(sum((x - mean) ** 2 for x in xs) / (len(xs) - 1)) if len(xs) > 1 else None
    return {"n": len(xs), "mean": mean, "sd": sd, "min": min(xs), "max": max(xs)}


def class_verdict(intervals: Sequence[Sequence[float | None] | None]) -> str:
    """A token class's verdict across seeds from each seed's 95% interval of ΔA
    (original minus redacted): it drops on every seed when every interval lies above 0,
    shows no drop when every interval holds 0, and differs otherwise.

    >>> class_verdict([(0.1, 0.3), (0.05, 0.2)]), class_verdict([(-0.01, 0.02)] * 3)
    ('drops on every seed', 'no drop on any seed')
    >>> class_verdict([(0.1, 0.3), (-0.02, 0.04)])
    'differs across seeds'
    """
    drops = [iv is not None and iv[0] is not None and iv[0] > 0 for iv in intervals]
    holds_zero = [
        iv is not None and iv[0] is not None and iv[1] is not None and iv[0] <= 0 <= iv[1]
        for iv in intervals
    ]
    if intervals and all(drops):
        return DROPS
    if intervals and all(holds_zero):
        return NO_DROP
    return MIXED


def redaction_seeds(
    runs: Sequence[str | Path], *, baselines: Sequence[str | Path] = ()
) -> dict[str, Any]:
    """The summary of ``runs`` (redaction folders or ``redaction.json`` files) and the
    no-evidence ``baselines`` (model folders holding ``training.json``), one entry per
    dataset: per variant the AUROC and ΔA as mean and spread across seeds, per cluster the
    same for the AUROC, every run's value and interval, and a verdict per class."""
    if not runs:
        raise DataError("redact-seeds: no redaction run given")
    groups: dict[str, dict[str, Any]] = {}
    for run in map(Path, runs):
        doc = _read(run, "redaction.json")
        data = (doc.get("meta", {}).get("inputs", {}) or {}).get("data") or {}
        key = str(data.get("sha256") or "")
        if not key:
            raise DataError(f"{run}: redaction.json records no input data digest")
        group = groups.setdefault(key, {"data": Path(str(data.get("path", ""))).parent.name,
                                         "sha256": key, "runs": [], "baselines": []})  # fmt: skip
        group["runs"].append((_label(run), doc))
    for base in map(Path, baselines):
        doc = _read(base, "training.json")
        key = str((doc.get("data") or {}).get("sha256") or "")
        if key not in groups:
            raise DataError(
                f"{base}: training.json names no data any run scored (its data digest is "
                f"{key[:12] or 'missing'}); train it with this version on the runs' data"
            )
        groups[key]["baselines"].append((_label(base), doc))
    return {
        "schema_version": 1,
        "datasets": [_dataset(g) for g in sorted(groups.values(), key=lambda g: g["data"])],
    }


def _dataset(group: dict[str, Any]) -> dict[str, Any]:
    runs = group["runs"]
    names = [v["name"] for v in runs[0][1]["variants"]]
    variants = []
    original = [next((v for v in doc["variants"] if v["name"] == "original"), None)
                for _, doc in runs]  # fmt: skip
    # no model learned: a redaction cannot lower what is already at chance
    at_chance = all(
        o is not None and o.get("ci95") and o["ci95"][0] <= 0.5 <= o["ci95"][1] for o in original
    )
    for name in names:
        rows = [next((v for v in doc["variants"] if v["name"] == name), None) for _, doc in runs]
        clusters = sorted({c for r in rows if r for c in r.get("by_group", {})})
        per_run = [
            {"run": path, "auroc": r["auroc"], "ci95": r.get("ci95"), "delta": r.get("delta"),
             "delta_ci95": r.get("delta_ci95"), "p_value": r.get("p_value")}
            if r is not None else {"run": path, "missing": True}
            for (path, _), r in zip(runs, rows, strict=True)
        ]  # fmt: skip
        present = [r for r in rows if r is not None]
        entry: dict[str, Any] = {
            "name": name,
            "auroc": _spread([r["auroc"] for r in present]),
            "delta": _spread([r.get("delta") for r in present]),
            "by_group": {
                c: _spread([r.get("by_group", {}).get(c) for r in present]) for c in clusters
            },
            "runs": per_run,
        }
        if name != "original":
            entry["verdict"] = (
                NOT_TESTABLE if at_chance else class_verdict([r.get("delta_ci95") for r in present])
            )
        variants.append(entry)
    out: dict[str, Any] = {
        "data": group["data"],
        "sha256": group["sha256"],
        "n_runs": len(runs),
        "rows": runs[0][1].get("rows"),
        "positives": runs[0][1].get("positives"),
        "variants": variants,
    }
    if group["baselines"]:
        evals = [doc.get("eval", {}) for _, doc in group["baselines"]]
        out["no_evidence"] = {
            "auroc": _spread([e.get("auroc") for e in evals]),
            "runs": [
                {"model": p, "auroc": e.get("auroc"), "ci95": e.get("ci95")}
                for (p, _), e in zip(group["baselines"], evals, strict=True)
            ],  # fmt: skip
        }
    return out


def _f(x: float | None) -> str:
    return "—" if x is None else f"{x:.4f}"


def _ms(s: dict[str, Any]) -> str:
    """``mean ± sd [min, max]`` of a spread."""
    if s["mean"] is None:
        return "—"
    sd = f" ± {s['sd']:.4f}" if s["sd"] is not None else ""
    return f"{s['mean']:.4f}{sd} [{s['min']:.4f}, {s['max']:.4f}]"


def seeds_markdown(summary: dict[str, Any]) -> str:
    """The summary as Markdown: per dataset, the seed's Table 8 beside the mean ± sd
    [min, max] across training seeds, per cluster, each class's verdict, and every run's
    own interval."""
    from toolaudit.datasets import SEED_FIGURES

    seed = SEED_FIGURES.redaction
    clusters = ("C1", "C2", "C3", "C4", "C5")
    lines = ["# Redaction across training seeds", ""]
    for ds in summary["datasets"]:
        lines += [
            f"## {ds['data']} ({ds['n_runs']} training seed{'s' * (ds['n_runs'] != 1)}; "
            f"{ds['rows']} test rows, "
            f"{ds['positives']} positive)",
            "",
            "| Variant | Seed (Table 8) | AUROC across seeds | ΔA across seeds | Verdict |",
            "|---|---|---|---|---|",
        ]
        for v in ds["variants"]:
            ref = seed.get(v["name"])
            lines.append(
                f"| {v['name']} | {_f(ref[0]) if ref else '—'} | {_ms(v['auroc'])} | "
                f"{_ms(v['delta']) if v['name'] != 'original' else '—'} | "
                f"{v.get('verdict', '—')} |"
            )
        if "no_evidence" in ds:
            lines.append(
                f"| no-evidence baseline | {_f(SEED_FIGURES.no_evidence)} | "
                f"{_ms(ds['no_evidence']['auroc'])} | — | — |"
            )
        lines += ["", "Per cluster (mean ± sd across seeds; the seed's value first):", "",
                  "| Variant | " + " | ".join(clusters) + " |",
                  "|---|" + "---|" * len(clusters)]  # fmt: skip
        for v in ds["variants"]:
            ref = seed.get(v["name"])
            cells = []
            for i, c in enumerate(clusters):
                s = v["by_group"].get(c)
                mine = (
                    "—"
                    if s is None or s["mean"] is None
                    else (f"{s['mean']:.3f}" + (f" ± {s['sd']:.3f}" if s["sd"] is not None else ""))
                )
                cells.append(f"{_f(ref[2 + i]) if ref else '—'} / {mine}")
            lines.append(f"| {v['name']} | " + " | ".join(cells) + " |")
        lines += ["", "Each run (AUROC [95% interval]; ΔA [95% interval]):", ""]
        for v in ds["variants"]:
            for r in v["runs"]:
                if r.get("missing"):
                    lines.append(f"- {v['name']}, {r['run']}: not scored")
                    continue
                ci = r.get("ci95") or [None, None]
                dci = r.get("delta_ci95") or [None, None]
                delta = (f"; ΔA {_f(r['delta'])} [{_f(dci[0])}, {_f(dci[1])}]"
                         if r.get("delta") is not None else "")  # fmt: skip
                lines.append(f"- {v['name']}, {r['run']}: {_f(r['auroc'])} "
                             f"[{_f(ci[0])}, {_f(ci[1])}]{delta}")  # fmt: skip
        lines.append("")
    return "\n".join(lines)

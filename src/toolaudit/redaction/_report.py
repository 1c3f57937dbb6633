"""``redaction.json`` and the report section (tables like the seed's Tables 7 and 8, the
validity rates, and a plot of ΔA with its interval per variant)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from toolaudit.redaction._apply import LOCATIONS
from toolaudit.redaction._audit import RedactionResult
from toolaudit.redaction._scoring import INVALID_SCORE, MIN_VALID_RATE, unreadable
from toolaudit.report import RESULTS_SCHEMA_VERSION, Finding, Section
from toolaudit.tokens import (
    DetectorSource,
    FieldSource,
    RecordSource,
    RegexSource,
    Source,
    TokenClass,
)
from toolaudit.traces import write_jsonl


def _source_json(src: Source) -> dict[str, str]:
    if isinstance(src, RegexSource):
        return {"kind": "regex", "value": src.pattern}
    if isinstance(src, FieldSource):
        return {"kind": "field", "value": src.key}
    if isinstance(src, RecordSource):
        return {"kind": "record", "value": src.path}
    if isinstance(src, DetectorSource):
        return {"kind": "detector", "value": src.name}
    raise TypeError(src)  # pragma: no cover


def class_json(cls: TokenClass) -> dict[str, Any]:
    """A token class as recorded in ``redaction.json``."""
    return {
        "name": cls.name,
        "placeholder": cls.placeholder,
        "mode": cls.mode,
        "description": cls.description,
        "sources": [_source_json(s) for s in cls.sources],
    }


def result_payload(
    result: RedactionResult, classes: Sequence[TokenClass], meta: dict[str, Any]
) -> dict[str, Any]:
    """The ``redaction.json`` document (DESIGN.md keys: ``variants``, ``calls``), with
    ``schema_version``, the residual check, and the run's fallbacks in ``meta``.

    ``calls`` holds only ``requests`` (how many model requests the audit needs, the same
    on every run): how many of them this invocation made or found cached differs between
    an interrupted-and-resumed run and an uninterrupted one, so those counters go to the
    run log (``run_log.jsonl``) and the terminal, never into the results."""
    groups: dict[str, dict[str, int]] = {}
    for g, y in zip(result.groups, result.labels, strict=True):
        cell = groups.setdefault(g, {"n": 0, "positives": 0})
        cell["n"] += 1
        cell["positives"] += y
    return {
        "variants": [v.as_json() for v in result.variants],
        "calls": {"requests": sum(int(result.calls.get(k, 0)) for k in ("made", "cached"))},
        "model": result.model,
        "scoring": result.scoring,
        "invalid_score": INVALID_SCORE,
        "rows": len(result.labels),
        "positives": sum(result.labels),
        "groups": dict(sorted(groups.items())),
        "classes": [class_json(c) for c in classes],
        "residual_check": dict(result.residual_check),
        "examples": list(result.examples),
        "schema_version": RESULTS_SCHEMA_VERSION,
        "meta": {
            **meta,
            "schema_version": meta.get("schema_version", RESULTS_SCHEMA_VERSION),
            "fallbacks": [
                *meta.get("fallbacks", []),
                *[f.model_dump() for f in result.fallbacks],
            ],
        },
    }


class ScoreRow(BaseModel):
    """One row of ``scores.jsonl``: the row's score under every variant."""

    model_config = ConfigDict(extra="forbid")

    id: str
    group: str
    label: int
    scores: dict[str, float]


def write_scores(out_dir: Path, result: RedactionResult, name: str = "scores.jsonl") -> Path:
    """Write the per-row scores (one line per row: its score under every variant) to
    ``out_dir/name``; returns the path."""
    out_dir.mkdir(parents=True, exist_ok=True)
    rows = [
        ScoreRow(
            id=rid,
            group=g,
            label=y,
            scores={v.name: v.scores[i] for v in result.variants},
        )
        for i, (rid, g, y) in enumerate(
            zip(result.row_ids, result.groups, result.labels, strict=True)
        )
    ]
    path = out_dir / name
    write_jsonl(path, rows)
    return path


def _ci(pair: Sequence[float | None] | None) -> str:
    if pair is None or any(v is None or math.isnan(v) for v in pair):
        return "—"
    lo, hi = pair
    assert lo is not None and hi is not None
    return f"[{lo:+.3f}, {hi:+.3f}]"


def report_view(result: RedactionResult | Any) -> dict[str, Any]:
    """What the report needs, from a :class:`RedactionResult` or a loaded
    ``redaction.json`` model (``RedactionResults``): variants, model, scoring, rows,
    positives, calls and the residual check."""
    if isinstance(result, RedactionResult):
        return {
            "variants": [v.as_json() for v in result.variants],
            "model": result.model,
            "scoring": result.scoring,
            "rows": len(result.labels),
            "positives": sum(result.labels),
            "calls": {"requests": sum(int(result.calls.get(k, 0)) for k in ("made", "cached"))},
            "residual_check": dict(result.residual_check),
            "examples": list(result.examples),
        }
    return dict(result.model_dump(mode="python"))


def _delta_plot(variants: list[dict[str, Any]]) -> Any:
    from toolaudit.report import new_figure

    vs = [v for v in variants if v["delta"] is not None]
    fig, ax = new_figure(figsize=(6.0, 0.6 + 0.5 * max(1, len(vs))))
    for i, v in enumerate(vs):
        lo, hi = v["delta_ci95"] or (float("nan"), float("nan"))
        d = float(v["delta"])
        lo = float("nan") if lo is None else lo
        hi = float("nan") if hi is None else hi
        ax.errorbar([d], [i], xerr=[[d - lo], [hi - d]], fmt="o", color="#2b5797", capsize=4)
    ax.axvline(0.0, color="#888", lw=1, ls="--")
    ax.set_yticks(range(len(vs)), [v["name"] for v in vs])
    ax.invert_yaxis()
    ax.set_xlabel("ΔA = AUROC(original) − AUROC(redacted)   (95% paired bootstrap)")
    ax.set_title("AUROC lost per redacted token class")
    fig.tight_layout()
    return fig


def report_sections(
    result: RedactionResult | Any, *, title: str = "Redaction audit"
) -> list[Section]:
    """The report section: Table 8-like results, Table 7-like intervention sizes,
    validity rates, the ΔA plot, and one sentence per variant rendered from its finding."""
    doc = report_view(result)
    variants: list[dict[str, Any]] = doc["variants"]
    orig = next(v for v in variants if v["name"] == "original")
    groups = sorted(orig["by_group"])
    calls = doc.get("calls", {})
    sec = Section(title)
    sec.text(
        f"Frozen model {doc['model']}, scoring '{doc['scoring']}', {doc['rows']} rows "
        f"({doc['positives']} positive). Every variant uses the same rows and the same "
        f"generation, parsing and scoring; ΔA = A_orig − A_variant (positive = performance "
        f"lost) with a paired stratified bootstrap interval and a paired permutation p-value. "
        f"Model requests: {calls.get('requests')} (responses are cached, so a rerun makes "
        f"no new calls)."
    )
    rows = [
        [v["name"], v["auroc"], "—" if v["delta"] is None else f"{v['delta']:+.4f}",
         _ci(v["delta_ci95"]), v["p_value"], *[v["by_group"].get(g) for g in groups]]
        for v in variants
    ]  # fmt: skip
    sec.table(
        "AUROC by variant, overall and per group (seed Table 8), with ΔA and its 95% interval",
        ["variant", "all", "ΔA", "ΔA 95% CI", "p (perm.)", *groups],
        rows,
    )
    check = doc.get("residual_check") or {}
    sec.table(
        f"Intervention size per token class (seed Table 7); residuals: occurrences of a "
        f"replaced value still found by plain substring search after redaction "
        f"({check.get('values_checked', 0)} row values checked)",
        ["variant", "placeholder", "replacements", "rows affected", "distinct values",
         *LOCATIONS, "residuals"],
        [
            [v["name"], v["placeholder"], v["replacements"], v["rows_affected"],
             v["distinct_values"], *[v["replacements_by_location"].get(k, 0) for k in LOCATIONS],
             v["residuals"]]
            for v in variants if v["delta"] is not None
        ],
    )  # fmt: skip
    _beside_seed(sec, variants, groups)
    sec.table(
        f"Answer validity per variant (generation: an integer 1..10 inside <answer>; invalid "
        f"answers score {INVALID_SCORE}); option mass = mean probability of the ten answers",
        ["variant", "valid rate", "option mass"],
        [[v["name"], v["valid_rate"], v["option_mass"]] for v in variants],
    )
    if any(v["delta"] is not None for v in variants):
        sec.figure(
            "ΔA with 95% paired bootstrap interval per redacted class", _delta_plot(variants)
        )
    sec.text(interpretation(result))
    for ex in doc.get("examples") or []:
        sec.transcript(
            f"One prompt before and after redacting {ex['variant']} (row {ex['row']}; the "
            "changed lines with one line of context)",
            [("prompt", ex["before"])],
            [("prompt", ex["after"])],
            labels=("original", f"{ex['variant']} redacted"),
        )
    return [sec]


def _beside_seed(sec: Section, variants: list[dict[str, Any]], groups: list[str]) -> None:
    """The seed's Table 8 and Table 7 beside this run's, when the run is that set-up
    (``pdb_id`` redacted on rows of clusters C1-C5: the controlled benchmark)."""
    from toolaudit.datasets import SEED_FIGURES, looks_like_tcr_redaction

    names = [v["name"] for v in variants]
    if not looks_like_tcr_redaction(names, groups):
        return
    seed = SEED_FIGURES

    def pair(run: Any, published: float | None, sign: str = "") -> str:
        """This run's figure as the tables above print it; the seed's as published."""
        a = "—" if run is None else format(run, f"{sign}.3f")
        b = "—" if published is None else format(published, f"{sign}.4f")
        return f"{a} / {b}"

    shown = [v for v in variants if v["name"] in seed.redaction]
    sec.text(
        f"**Beside the seed** ({seed.source}, Tables 7 and 8: real TCR-pMHC data, a "
        f"fine-tuned Qwen3-4B, 4,898 test rows; no-evidence model {seed.no_evidence:.4f}). "
        "The controlled benchmark mirrors the seed's set-up with a planted shortcut, so "
        "compare the pattern (which redaction costs AUROC, in which clusters), not the "
        "values. Each cell: this run / the seed."
    )
    sec.table(
        "Table 8 beside the seed's (this run / seed)",
        ["variant", "all", "ΔA", *seed.clusters, "replacements (Table 7)"],
        [
            [
                v["name"],
                pair(v["auroc"], seed.redaction[v["name"]][0]),
                pair(v["delta"], seed.redaction[v["name"]][1], "+"),
                *[
                    pair(v["by_group"].get(g), seed.redaction[v["name"]][2 + i])
                    for i, g in enumerate(seed.clusters)
                ],
                "—" if v["delta"] is None else
                f"{v['replacements']:,} / {seed.replacements.get(v['name'], 0):,}",
            ]
            for v in shown
        ],
    )  # fmt: skip


def variant_findings(result: RedactionResult | Any) -> list[Finding]:
    """One finding per variant: the original's AUROC (verdict ``baseline``), then each
    redacted class's ΔA with its paired interval, read as ``loss`` (interval above 0),
    ``gain`` (below 0) or ``no_change``; ``not_estimable`` when fewer than
    :data:`~toolaudit.redaction._scoring.MIN_VALID_RATE` of either side's answers could
    be read (the ΔA then compares fixed invalid scores, not the model's ranking)."""
    out: list[Finding] = []
    view = report_view(result)["variants"]
    orig_valid = next((v["valid_rate"] for v in view if v["delta"] is None), None)
    for v in view:
        if v["delta"] is None:
            lo, hi = v["ci95"]
            out.append(Finding(name="redaction.original", verdict="baseline", value=v["auroc"],
                               interval=(lo, hi), level=0.95, test="stratified bootstrap",
                               subject="original"))  # fmt: skip
            continue
        iv = v["delta_ci95"]
        f = Finding(
            name=f"redaction.{v['name']}",
            verdict="no_change",
            value=v["delta"],
            interval=(iv[0], iv[1]) if iv else None,
            level=0.95,
            test="paired stratified bootstrap",
            p_value=v["p_value"],
            subject=v["name"],
            details={"auroc": v["auroc"], "replacements": v["replacements"],
                     "valid_rate": v["valid_rate"], "original_valid_rate": orig_valid},
        )  # fmt: skip
        verdict = "loss" if f.interval_excludes(0.0) and (v["delta"] or 0) > 0 else (
            "gain" if f.interval_excludes(0.0) else "no_change")  # fmt: skip
        if unreadable(v["valid_rate"]) or unreadable(orig_valid):
            verdict = "not_estimable"
        out.append(f.model_copy(update={"verdict": verdict}))
    return out


_VERDICT_TEXT = {
    "loss": "a significant loss: the model depends on this class",
    "gain": "a significant gain",
    "no_change": "no significant change",
}


def finding_sentence(f: Finding) -> str:
    """The report sentence of one :func:`variant_findings` finding."""
    lo, hi = f.interval or (None, None)
    if f.verdict == "baseline":
        return f"Original AUROC {f.value:.3f} [{lo:.3f}, {hi:.3f}]."
    if f.verdict == "not_estimable":
        return (
            f"Redacting {f.subject} ({f.details['replacements']} replacements) is not "
            f"estimable: {_rate(f.details['valid_rate'])} of its answers could be read "
            f"(original {_rate(f.details['original_valid_rate'])}; below "
            f"{MIN_VALID_RATE:.0%} the AUROC ranks the fixed invalid score "
            f"{INVALID_SCORE}), so its ΔA {f.value:+.3f} says nothing about dependence."
        )
    return (
        f"Redacting {f.subject} ({f.details['replacements']} replacements) gives AUROC "
        f"{f.details['auroc']:.3f}, ΔA {f.value:+.3f} [{lo:+.3f}, {hi:+.3f}]: "
        f"{_VERDICT_TEXT[f.verdict]}."
    )


def _rate(x: float | None) -> str:
    return "an unknown share" if x is None or math.isnan(x) else f"{x:.0%}"


def at_chance(original: Finding) -> bool:
    """True when the original AUROC's interval reaches 0.5: the frozen model does not rank
    the original rows above chance, so no redaction can show that it depends on a class
    (a null ΔA is then not evidence of no dependence)."""
    lo, hi = original.interval or (None, None)
    return lo is None or hi is None or not (lo > 0.5 or hi < 0.5)  # NaN: undefined


def chance_sentence(original: Finding) -> str:
    """The report's statement that the dependence test is not informative for this model,
    from the original AUROC's computed interval."""
    lo, hi = original.interval or (None, None)
    ci = f"[{lo:.3f}, {hi:.3f}]" if lo is not None and hi is not None else "undefined"
    return (
        f"The dependence test is not informative for this model: on the original prompts "
        f"it ranks the rows at chance (AUROC {original.value:.3f}, 95% interval {ci} "
        f"includes 0.5), so an interval of ΔA that includes 0 is not evidence that the "
        f"model does not depend on a class."
        + (
            " The interval has zero width: every bootstrap resample gives the same AUROC, "
            "which is what a model that gives every row the same score produces."
            if lo is not None and lo == hi
            else ""
        )
    )


def interpretation(result: RedactionResult | Any) -> str:
    """A plain-language reading of the variants, rendered from :func:`variant_findings`."""
    findings = variant_findings(result)
    parts = [finding_sentence(f) for f in findings]
    original = next((f for f in findings if f.verdict == "baseline"), None)
    if original is not None and original.value is not None and at_chance(original):
        parts.append(chance_sentence(original))
    parts.append(
        "A large drop after a targeted redaction together with a stable control is evidence "
        "of dependence on the shortcut; the conclusion concerns model behaviour only, since "
        "redaction can also remove correlated signal or shift the input distribution."
    )
    return " ".join(parts)

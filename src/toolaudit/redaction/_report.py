"""``redaction.json`` and the report section (tables like the seed's Tables 7 and 8, the
validity rates, and a plot of ΔA with its interval per variant)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from toolaudit.redaction._apply import LOCATIONS
from toolaudit.redaction._audit import RedactionResult
from toolaudit.redaction._classes import (
    DetectorSource,
    FieldSource,
    RecordSource,
    RegexSource,
    Source,
    TokenClass,
)
from toolaudit.redaction._scoring import INVALID_SCORE
from toolaudit.report import Section, write_results
from toolaudit.traces import write_jsonl
from toolaudit.traces._schema import _Record


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
    """The ``redaction.json`` document (DESIGN.md keys: ``variants``, ``calls``).

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
        "meta": meta,
    }


class ScoreRow(_Record):
    """One row of ``scores.jsonl``: the row's score under every variant."""

    id: str
    group: str
    label: int
    scores: dict[str, float]


def write_outputs(
    out_dir: Path,
    result: RedactionResult,
    classes: Sequence[TokenClass],
    meta: dict[str, Any],
    *,
    scores_name: str = "scores.jsonl",
) -> Path:
    """Write ``redaction.json`` and the per-row scores (``scores_name``) into ``out_dir``;
    returns the path of ``redaction.json``."""
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
    write_jsonl(out_dir / scores_name, rows)
    return write_results(out_dir / "redaction.json", result_payload(result, classes, meta))


def _ci(pair: Sequence[float] | None) -> str:
    if pair is None or any(v is None or math.isnan(v) for v in pair):
        return "—"
    return f"[{pair[0]:+.3f}, {pair[1]:+.3f}]"


def _delta_plot(result: RedactionResult) -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    vs = [v for v in result.variants if v.delta is not None]
    fig, ax = plt.subplots(figsize=(6.0, 0.6 + 0.5 * max(1, len(vs))))
    for i, v in enumerate(vs):
        lo, hi = v.delta_ci95 or (float("nan"), float("nan"))
        d = float(v.delta) if v.delta is not None else float("nan")
        ax.errorbar([d], [i], xerr=[[d - lo], [hi - d]], fmt="o", color="#2b5797", capsize=4)
    ax.axvline(0.0, color="#888", lw=1, ls="--")
    ax.set_yticks(range(len(vs)), [v.name for v in vs])
    ax.invert_yaxis()
    ax.set_xlabel("ΔA = AUROC(original) − AUROC(redacted)   (95% paired bootstrap)")
    ax.set_title("AUROC lost per redacted token class")
    fig.tight_layout()
    return fig


def report_sections(result: RedactionResult, *, title: str = "Redaction audit") -> list[Section]:
    """The report section: Table 8-like results, Table 7-like intervention sizes,
    validity rates, and the ΔA plot."""
    orig = result.variant("original")
    groups = sorted(orig.by_group)
    sec = Section(title)
    sec.text(
        f"Frozen model {result.model}, scoring '{result.scoring}', {len(result.labels)} rows "
        f"({sum(result.labels)} positive). Every variant uses the same rows and the same "
        f"generation, parsing and scoring; ΔA = A_orig − A_variant (positive = performance "
        f"lost) with a paired stratified bootstrap interval and a paired permutation p-value. "
        f"Model requests: {sum(int(result.calls.get(k, 0)) for k in ('made', 'cached'))} "
        f"(responses are cached, so a rerun makes no new calls)."
    )
    rows = [
        [v.name, v.auroc, "—" if v.delta is None else f"{v.delta:+.4f}", _ci(v.delta_ci95),
         v.p_value, *[v.by_group.get(g) for g in groups]]
        for v in result.variants
    ]  # fmt: skip
    sec.table(
        "AUROC by variant, overall and per group (seed Table 8), with ΔA and its 95% interval",
        ["variant", "all", "ΔA", "ΔA 95% CI", "p (perm.)", *groups],
        rows,
    )
    sec.table(
        "Intervention size per token class (seed Table 7); residuals are checked and must be 0",
        ["variant", "placeholder", "replacements", "rows affected", "distinct values",
         *LOCATIONS, "residuals"],
        [
            [v.name, v.placeholder, v.replacements, v.rows_affected, v.distinct_values,
             *[v.replacements_by_location.get(k, 0) for k in LOCATIONS], v.residuals]
            for v in result.variants if v.delta is not None
        ],
    )  # fmt: skip
    sec.table(
        f"Answer validity per variant (generation: an integer 1..10 inside <answer>; invalid "
        f"answers score {INVALID_SCORE}); option mass = mean probability of the ten answers",
        ["variant", "valid rate", "option mass"],
        [[v.name, v.valid_rate, v.option_mass] for v in result.variants],
    )
    if any(v.delta is not None for v in result.variants):
        sec.figure("ΔA with 95% paired bootstrap interval per redacted class", _delta_plot(result))
    sec.text(interpretation(result))
    return [sec]


def interpretation(result: RedactionResult) -> str:
    """A plain-language reading of the variants (drop vs. control)."""
    orig = result.variant("original")
    parts = [f"Original AUROC {orig.auroc:.3f} [{orig.ci95[0]:.3f}, {orig.ci95[1]:.3f}]."]
    for v in result.variants:
        if v.delta is None or v.delta_ci95 is None:
            continue
        lo, hi = v.delta_ci95
        if lo > 0:
            verdict = "a significant loss: the model depends on this class"
        elif hi < 0:
            verdict = "a significant gain"
        else:
            verdict = "no significant change"
        parts.append(
            f"Redacting {v.name} ({v.replacements} replacements) gives AUROC {v.auroc:.3f}, "
            f"ΔA {v.delta:+.3f} [{lo:+.3f}, {hi:+.3f}]: {verdict}."
        )
    parts.append(
        "A large drop after a targeted redaction together with a stable control is evidence "
        "of dependence on the shortcut; the conclusion concerns model behaviour only, since "
        "redaction can also remove correlated signal or shift the input distribution."
    )
    return " ".join(parts)

"""``run_leakage``: PT2D scope table, provenance, token classes, prefix lookup, dilution."""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from toolaudit.errors import ConfigError, DataError
from toolaudit.leakage._cluster import dask_client
from toolaudit.leakage._config import LeakageConfig, ScopeResult
from toolaudit.leakage._engine import Design, PT2DEngine, run_jobs
from toolaudit.leakage._features import FeatureSpec
from toolaudit.leakage._partition import Partition, make_partition
from toolaudit.leakage._prefix import prefix_choice, prefix_lookup
from toolaudit.leakage._presence import presence_scores
from toolaudit.leakage._scoring import one_class_groups, roc_curves, summarize
from toolaudit.leakage._tokenclass import ProvenanceEntry, describe_terms, token_classes
from toolaudit.leakage._tron import class_grouped
from toolaudit.leakage._verdict import ScoredScope, decide, verdict_sentence
from toolaudit.progress import Progress
from toolaudit.report import Fallback, Finding, record_fallback
from toolaudit.traces import Example

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class LeakageResult:
    """Everything ``leakage.json`` holds (besides ``meta``)."""

    scopes: list[ScopeResult]
    provenance: dict[str, Any]
    prefix_lookup: dict[str, Any] | None
    dilution: dict[str, Any] | None
    partition: dict[str, Any]
    tools: list[str]
    warnings: list[str]
    verdict: dict[str, Any] = field(default_factory=dict)
    presence: dict[str, Any] | None = None
    roc: dict[str, Any] | None = None
    fallbacks: list[Fallback] = field(default_factory=list)

    def finding(self) -> Finding:
        """The verdict as a :class:`toolaudit.report.Finding`."""
        return Finding.model_validate(self.verdict["evidence"])

    def table(self, features: str) -> dict[str, float]:
        """AUROC by scope for one feature set."""
        return {s.scope: s.summary.auroc for s in self.scopes if s.features == features}

    def as_json(self) -> dict[str, Any]:
        """The results payload (add ``meta`` before writing)."""
        return {
            "scopes": [s.as_json() for s in self.scopes],
            "provenance": self.provenance,
            "prefix_lookup": self.prefix_lookup,
            "dilution": self.dilution,
            "partition": self.partition,
            "tools": self.tools,
            "warnings": self.warnings,
            "verdict": self.verdict,
            "presence_control": self.presence,
            "roc": self.roc,
        }


def _check_inputs(
    examples: Sequence[Example], engine: PT2DEngine, part: Partition, warnings: list[str]
) -> None:
    for tool, n in engine.columns.missing.items():
        if n:
            warnings.append(
                f"tool {tool!r} is absent from {n} of {len(examples)} examples; "
                "treated as an empty section there"
            )
    y = np.array([e.label for e in examples])
    groups = [e.group for e in examples]
    ev = part.eval_rows
    if np.unique(y[ev]).size < 2:
        warnings.append(
            f"the evaluation partition ({part.description}) has one class only "
            f"(label {int(y[ev][0]) if ev.size else '-'}); its AUROC is undefined"
        )
    bad = one_class_groups(y[ev], [groups[i] for i in ev])
    if bad:
        shown = ", ".join(bad[:10]) + (f" and {len(bad) - 10} more" if len(bad) > 10 else "")
        warnings.append(
            f"{len(bad)} evaluation group(s) have one class only, so their AUROC is "
            f"undefined (null): {shown}"
        )


def _scope_jobs(
    engine: PT2DEngine,
    scopes: Sequence[str],
    specs: Sequence[FeatureSpec],
    part: Partition,
    y: np.ndarray,
    cfg: LeakageConfig,
    keep: dict[tuple[str, str], Any],
) -> Iterator[tuple[Any, tuple[Any, np.ndarray, Any, int]]]:
    folds = list(part.folds)
    cv = part.mode == "grouped_cv"
    if cv:  # provenance comes from one extra fit on the whole pool
        folds.append((np.arange(len(y)), np.empty(0, dtype=np.int64)))
    # fit rows grouped by class: the fit then runs on the design itself (see _tron)
    folds = [(class_grouped(fit, y), ev) for fit, ev in folds]
    for analyzer in ("word", "char_wb"):
        group = [s for s in specs if s.analyzer == analyzer]
        for scope in scopes if group else ():
            counts = engine.counts(analyzer, engine.scope_tools(scope))
            for spec in group:
                for i, (fit, ev) in enumerate(folds):
                    design = engine.design(counts, spec, fit, ev, lazy_eval=True)
                    prov = i == len(folds) - 1
                    if prov or (i == 0 and not cv):  # vocabulary only: matrices are large
                        keep[(scope, spec.name)] = Design(None, None, design.vocab, design.min_df)
                    top_k = cfg.top_k if prov else 0
                    yield (scope, spec.name, i), (design.x_fit, y[fit], design.x_eval, top_k)
                    del design  # before the next design is built


def _dilution_config(cfg: LeakageConfig, fallbacks: list[Fallback]) -> LeakageConfig:
    """The dilution sweep runs on a selected feature set; when the configured one was not
    selected, the closest selected one is used instead (recorded as a fallback)."""
    dcfg = cfg.dilution
    if dcfg is None:
        return cfg
    names = [s.name for s in cfg.features]
    if dcfg.features in names:
        return cfg
    chars = [s.name for s in cfg.features if s.analyzer == "char_wb"]
    pick = "char_wb_3_5" if "char_wb_3_5" in names else (chars[-1] if chars else names[0])
    record_fallback(
        fallbacks,
        Fallback(
            kind="relaxed_parameter",
            what="leakage.dilution.features",
            detail=f"{dcfg.features} was not among the selected feature sets; the dilution "
            f"sweeps use {pick}",
        ),
    )
    return replace(cfg, dilution=replace(dcfg, features=pick))


def _focus(specs: Sequence[FeatureSpec]) -> str:
    names = [s.name for s in specs]
    if "char_wb_3_5" in names:
        return "char_wb_3_5"
    chars = [s.name for s in specs if s.analyzer == "char_wb"]
    return chars[-1] if chars else names[0]


def run_leakage(
    examples: Sequence[Example],
    config: LeakageConfig | None = None,
    *,
    progress: Progress | None = None,
    scores_out: dict[tuple[str, str], np.ndarray] | None = None,
) -> LeakageResult:
    """Run the PT2D audit (seed Stage 1) on labelled examples.

    ``scores_out``, when given, receives each scope-table row's decision scores keyed by
    ``(scope, feature set)``: one value per example, NaN outside the evaluation rows.

    >>> from toolaudit.datasets import make_tcr_shortcut  # doctest: +SKIP
    >>> result = run_leakage(make_tcr_shortcut(scale=0.05))  # doctest: +SKIP
    >>> result.table("char_wb_3_5")["thermompnn_ddg"] > 0.6  # doctest: +SKIP
    True
    """
    cfg = config or LeakageConfig()
    if not examples:
        raise DataError("no examples to audit")
    workers = cfg.n_jobs if cfg.n_jobs > 0 else (os.cpu_count() or 1)
    with dask_client(cfg.scheduler, n_workers=max(workers, 2)) as client:
        return _run(examples, cfg, progress=progress, client=client, scores_out=scores_out)


def _run(
    examples: Sequence[Example],
    cfg: LeakageConfig,
    *,
    progress: Progress | None,
    client: Any,
    scores_out: dict[tuple[str, str], np.ndarray] | None = None,
) -> LeakageResult:
    warnings: list[str] = []
    fallbacks: list[Fallback] = []
    cfg = _dilution_config(cfg, fallbacks)
    part = make_partition(examples, fit=cfg.fit, eval=cfg.eval, cv_folds=cfg.cv_folds)
    engine = PT2DEngine(examples, cfg.features, progress=progress, threads=cfg.threads or None)
    tools = list(engine.tools)
    if not tools:
        raise DataError("the examples carry no tool sections")
    scopes = list(cfg.scopes) if cfg.scopes else ["full", *tools]
    for s in scopes:
        if s != "full" and s not in tools:
            raise ConfigError.invalid("scopes", ["full", *tools], s)
    _check_inputs(examples, engine, part, warnings)
    y = np.array([e.label for e in examples], dtype=int)
    groups = [e.group for e in examples]
    for fit, _ in part.folds:
        if np.unique(y[fit]).size < 2:
            raise DataError(f"the fit partition ({part.description}) has one class only")
    keep: dict[tuple[str, str], Any] = {}
    n_folds = len(part.folds) + (part.mode == "grouped_cv")
    total = len(scopes) * len(cfg.features) * n_folds
    results = run_jobs(
        _scope_jobs(engine, scopes, cfg.features, part, y, cfg, keep),
        cfg.lr,
        n_jobs=cfg.n_jobs,
        backend=cfg.backend,
        client=client,
        total=total,
        progress=progress,
        threads=cfg.fit_threads(engine.threads),
    )
    scores: dict[tuple[str, str], np.ndarray] = {}
    prov_out: dict[tuple[str, str], Any] = {}
    for (scope, feat, i), out in results:
        arr = scores.setdefault((scope, feat), np.full(len(examples), np.nan))
        if i < len(part.folds):
            arr[part.folds[i][1]] = out.scores
        if out.top_pos or out.top_neg:
            prov_out[(scope, feat)] = out
    if scores_out is not None:
        scores_out.update(scores)
    ev = part.eval_rows
    y_ev = y[ev]
    spec_by = {s.name: s for s in cfg.features}
    rows: list[ScopeResult] = []
    for spec in cfg.features:
        for scope in scopes:
            sc = scores[(scope, spec.name)][ev]
            summ = summarize(y_ev, sc, [groups[i] for i in ev], n_boot=cfg.n_boot, seed=cfg.seed)
            design = keep[(scope, spec.name)]
            rows.append(ScopeResult(scope, spec.name, summ, int(design.vocab.size), design.min_df))
            if design.min_df != spec.min_df:
                record_fallback(
                    fallbacks,
                    Fallback(
                        kind="relaxed_parameter",
                        what="leakage.min_df",
                        detail=f"scope {scope}, {spec.name}: min_df={spec.min_df} leaves no "
                        f"usable vocabulary for this fit partition; used min_df={design.min_df}",
                    ),
                )
    auroc_of = {(r.scope, r.features): r.summary.auroc for r in rows}
    entries: list[ProvenanceEntry] = describe_terms(
        engine, prov_out, keep, spec_by, part.fit_rows, auroc_of, [e.id for e in examples]
    )
    classes = token_classes(engine, entries, auroc_of)
    provenance = {
        "features": [e.as_json() for e in entries],
        "classes": [c.as_json() for c in classes],
    }
    focus = _focus(cfg.features)
    ranked = sorted(
        (r for r in rows if r.scope != "full" and r.features == focus),
        key=lambda r: -np.nan_to_num(r.summary.auroc, nan=0.0),
    )
    carrier = ranked[0].scope if ranked else tools[0]
    prefix_scores: dict[int, np.ndarray] = {}
    prefix: dict[str, Any] | None
    if cfg.prefix_class is not None:
        chosen: str | None = cfg.prefix_class
        skipped: str | None = None
    else:
        chosen, skipped = prefix_choice(classes, carrier, len(examples))
    if chosen is not None:
        prefix = prefix_lookup(
            engine, classes, part, y, groups, cfg, warnings, wanted=chosen, scores_out=prefix_scores
        )
    else:
        prefix = {"class": None, "skipped": skipped, "rows": []}
        record_fallback(
            fallbacks,
            Fallback(kind="skipped_part", what="leakage.prefix_lookup", detail=str(skipped)),
        )
    presence = presence_scores(engine.columns, part, y, cfg.lr) if cfg.presence else None
    presence_row: dict[str, Any] | None = None
    presence_scope: ScoredScope | None = None
    if presence is not None and presence.scores is not None:
        summ = summarize(
            y_ev, presence.scores[ev], [groups[i] for i in ev], n_boot=cfg.n_boot, seed=cfg.seed
        )
        presence_row = {"n_features": presence.n_features, **summ.as_json()}
        presence_scope = ScoredScope(
            "presence", "tool calls", summ.auroc, summ.ci95, presence.scores[ev]
        )
    elif presence is not None:
        presence_row = {"skipped": presence.skipped}
        record_fallback(
            fallbacks,
            Fallback(
                kind="skipped_part", what="leakage.presence_control", detail=str(presence.skipped)
            ),
        )
    prefix_scope = None
    if prefix and prefix.get("rows"):
        best = max(prefix["rows"], key=lambda r: np.nan_to_num(r["ci95"][0], nan=0.0))
        tool_of = prefix.get("tool")
        prefix_scope = ScoredScope(
            tool_of if tool_of and tool_of != "*" else carrier,
            f"{best['chars']} char",
            best["auroc"],
            tuple(best["ci95"]),
            prefix_scores[best["chars"]],
        )
    scoped = [
        ScoredScope(
            r.scope, r.features, r.summary.auroc, r.summary.ci95, scores[(r.scope, r.features)][ev]
        )
        for r in rows
    ]
    carrier_class = next((c.name for c in classes if carrier in c.tools), None)
    finding = decide(
        scoped,
        y_ev,
        prefix=prefix_scope,
        prefix_class=prefix.get("class") if prefix else None,
        carrier_class=carrier_class,
        presence=presence_scope,
        n_boot=cfg.n_boot,
        seed=cfg.seed,
    )
    if finding.verdict == "localized":
        subject = finding.subject
        carrier_class = next((c.name for c in classes if subject in c.tools), None)
    verdict = {
        "kind": finding.verdict,
        "carrier": finding.subject if finding.verdict == "localized" else None,
        "carrier_class": carrier_class if finding.verdict == "localized" else None,
        "sentence": verdict_sentence(finding),
        "evidence": finding.model_dump(mode="json"),
    }
    roc_scopes = [("full", scores[("full", focus)])] if ("full", focus) in scores else []
    if ranked:
        roc_scopes.append((ranked[0].scope, scores[(ranked[0].scope, focus)]))
    roc = {"features": focus, "curves": roc_curves(y_ev, [(s, a[ev]) for s, a in roc_scopes])}
    dilution = None
    if cfg.dilution is not None:
        from toolaudit.leakage._dilution import run_dilution

        # the sweeps' points that are scope-table rows (the carrier alone; every tool, the
        # full trace's own counts) reuse those fits instead of refitting them
        known = {
            frozenset(engine.scope_tools(scope)): arr
            for (scope, feat), arr in scores.items()
            if feat == cfg.dilution.features
        }
        dilution = run_dilution(
            engine,
            part,
            y,
            groups,
            cfg,
            rows,
            classes,
            known=known,
            progress=progress,
            client=client,
            free_sections=True,
        )
        syn = dilution["synthetic"]
        if syn["pool_size"] == 0 and syn["k_values"]:
            record_fallback(
                fallbacks,
                Fallback(
                    kind="empty_pool",
                    what="leakage.dilution.synthetic",
                    detail=f"no non-carrier tool with text is left for carrier "
                    f"{dilution['carrier']}; the synthetic sweep was not run",
                    count=0,
                ),
            )
    if progress is not None:
        progress(1, 1, "done")
    return LeakageResult(
        rows,
        provenance,
        prefix,
        dilution,
        part.as_json(),
        tools,
        warnings,
        verdict=verdict,
        presence=presence_row,
        roc=roc,
        fallbacks=fallbacks,
    )

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
from toolaudit.leakage._config import DEFAULT_CV_FOLDS, LeakageConfig, ScopeResult
from toolaudit.leakage._engine import Design, PT2DEngine
from toolaudit.leakage._features import FeatureSpec
from toolaudit.leakage._fits import run_jobs
from toolaudit.leakage._partition import Partition, make_partition
from toolaudit.leakage._prefix import prefix_choice, prefix_lookup
from toolaudit.leakage._presence import presence_scores
from toolaudit.leakage._scoring import one_class_groups, roc_curves, summarize
from toolaudit.leakage._tokenclass import ProvenanceEntry, describe_terms, token_classes
from toolaudit.leakage._tron import class_grouped
from toolaudit.leakage._verdict import ScoredScope, decide
from toolaudit.leakage._wording import verdict_sentence
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


@dataclass(slots=True)
class _Inputs:
    """What every step reads: the partition, the engine, the scopes, labels and groups."""

    part: Partition
    engine: PT2DEngine
    tools: list[str]
    scopes: list[str]
    y: np.ndarray
    groups: list[str]

    @property
    def eval_labels(self) -> np.ndarray:
        labels: np.ndarray = self.y[self.part.eval_rows]
        return labels

    @property
    def eval_groups(self) -> list[str]:
        return [self.groups[i] for i in self.part.eval_rows]


def _prepare(
    examples: Sequence[Example], cfg: LeakageConfig, progress: Progress | None, warnings: list[str]
) -> _Inputs:
    """Step 1: partition, engine and scopes, every check on the input before any fit."""
    part = make_partition(examples, fit=cfg.fit, eval=cfg.eval, cv_folds=cfg.cv_folds)
    if part.mode == "holdout" and cfg.cv_folds != DEFAULT_CV_FOLDS:
        warnings.append(
            f"cv_folds={cfg.cv_folds} is not used: the partition is a holdout "
            f"({part.description}), not cross-validation on one pool"
        )
    if progress is not None:
        from toolaudit.leakage._kernels import compiled_before

        if not compiled_before():
            progress(0, 0, "compiling the PT2D kernels (numba; once per install)")
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
    for fit, _ in part.folds:
        if np.unique(y[fit]).size < 2:
            raise DataError(f"the fit partition ({part.description}) has one class only")
    return _Inputs(part, engine, tools, scopes, y, [e.group for e in examples])


def _fit_scopes(
    inp: _Inputs, cfg: LeakageConfig, progress: Progress | None, client: Any
) -> tuple[dict[tuple[str, str], np.ndarray], dict[tuple[str, str], Any], dict[Any, Any]]:
    """Step 2: every (scope, feature set, fold) fit: out-of-fold scores per example (NaN
    outside the evaluation rows), the provenance fits' top terms, the kept designs."""
    part = inp.part
    keep: dict[tuple[str, str], Any] = {}
    n_folds = len(part.folds) + (part.mode == "grouped_cv")
    results = run_jobs(
        _scope_jobs(inp.engine, inp.scopes, cfg.features, part, inp.y, cfg, keep),
        cfg.lr,
        n_jobs=cfg.n_jobs,
        backend=cfg.backend,
        client=client,
        total=len(inp.scopes) * len(cfg.features) * n_folds,
        progress=progress,
        threads=cfg.fit_threads(inp.engine.threads),
    )
    scores: dict[tuple[str, str], np.ndarray] = {}
    prov_out: dict[tuple[str, str], Any] = {}
    for (scope, feat, i), out in results:
        arr = scores.setdefault((scope, feat), np.full(inp.y.size, np.nan))
        if i < len(part.folds):
            arr[part.folds[i][1]] = out.scores
        if out.top_pos or out.top_neg:
            prov_out[(scope, feat)] = out
    return scores, prov_out, keep


def _scope_table(
    inp: _Inputs,
    specs: Sequence[FeatureSpec],
    scores: dict[tuple[str, str], np.ndarray],
    keep: dict[tuple[str, str], Any],
    *,
    n_boot: int,
    seed: int,
    fallbacks: list[Fallback],
) -> list[ScopeResult]:
    """Step 3: the scope x feature-set table (AUROC with bootstrap intervals); a relaxed
    ``min_df`` is recorded as a fallback."""
    ev = inp.part.eval_rows
    rows: list[ScopeResult] = []
    for spec in specs:
        for scope in inp.scopes:
            sc = scores[(scope, spec.name)][ev]
            summ = summarize(inp.eval_labels, sc, inp.eval_groups, n_boot=n_boot, seed=seed)
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
    return rows


def _prefix_step(
    inp: _Inputs,
    cfg: LeakageConfig,
    classes: list[Any],
    carrier: str,
    warnings: list[str],
    fallbacks: list[Fallback],
) -> tuple[dict[str, Any] | None, ScoredScope | None]:
    """Step 5: the prefix lookup on the chosen token class (or the reason it was
    skipped), and its best prefix length as a scope for the verdict."""
    prefix_scores: dict[int, np.ndarray] = {}
    if cfg.prefix_class is not None:
        chosen: str | None = cfg.prefix_class
        skipped: str | None = None
    else:
        chosen, skipped = prefix_choice(classes, carrier, inp.y.size)
    if chosen is None:
        record_fallback(
            fallbacks,
            Fallback(kind="skipped_part", what="leakage.prefix_lookup", detail=str(skipped)),
        )
        return {"class": None, "skipped": skipped, "rows": []}, None
    prefix = prefix_lookup(
        inp.engine, classes, inp.part, inp.y, inp.groups, cfg, warnings,
        wanted=chosen, scores_out=prefix_scores,
    )  # fmt: skip
    if not prefix or not prefix.get("rows"):
        return prefix, None
    best = max(prefix["rows"], key=lambda r: np.nan_to_num(r["ci95"][0], nan=0.0))
    tool_of = prefix.get("tool")
    return prefix, ScoredScope(
        tool_of if tool_of and tool_of != "*" else carrier,
        f"{best['chars']} char",
        best["auroc"],
        tuple(best["ci95"]),
        prefix_scores[best["chars"]],
    )


def _presence_step(
    inp: _Inputs, cfg: LeakageConfig, fallbacks: list[Fallback]
) -> tuple[dict[str, Any] | None, ScoredScope | None]:
    """Step 6: the presence control (which tools were called, nothing of their text)."""
    if not cfg.presence:
        return None, None
    presence = presence_scores(inp.engine.columns, inp.part, inp.y, cfg.lr)
    if presence.scores is None:
        record_fallback(
            fallbacks,
            Fallback(
                kind="skipped_part", what="leakage.presence_control", detail=str(presence.skipped)
            ),
        )
        return {"skipped": presence.skipped}, None
    ev = presence.scores[inp.part.eval_rows]
    summ = summarize(inp.eval_labels, ev, inp.eval_groups, n_boot=cfg.n_boot, seed=cfg.seed)
    row = {"n_features": presence.n_features, **summ.as_json()}
    return row, ScoredScope("presence", "tool calls", summ.auroc, summ.ci95, ev)


def _verdict_step(
    inp: _Inputs,
    rows: list[ScopeResult],
    scores: dict[tuple[str, str], np.ndarray],
    classes: list[Any],
    carrier: str,
    prefix: dict[str, Any] | None,
    prefix_scope: ScoredScope | None,
    presence_scope: ScoredScope | None,
    *,
    n_boot: int,
    seed: int,
) -> dict[str, Any]:
    """Step 7: the verdict block (kind, carrier, its token class, sentence, evidence)."""
    ev = inp.part.eval_rows
    scoped = [
        ScoredScope(
            r.scope, r.features, r.summary.auroc, r.summary.ci95, scores[(r.scope, r.features)][ev]
        )
        for r in rows
    ]
    carrier_class = next((c.name for c in classes if carrier in c.tools), None)
    finding = decide(
        scoped,
        inp.eval_labels,
        prefix=prefix_scope,
        prefix_class=prefix.get("class") if prefix else None,
        carrier_class=carrier_class,
        presence=presence_scope,
        n_boot=n_boot,
        seed=seed,
    )
    localized = finding.verdict == "localized"
    if localized:
        carrier_class = next((c.name for c in classes if finding.subject in c.tools), None)
    return {
        "kind": finding.verdict,
        "carrier": finding.subject if localized else None,
        "carrier_class": carrier_class if localized else None,
        "sentence": verdict_sentence(finding),
        "evidence": finding.model_dump(mode="json"),
    }


def _dilution_step(
    inp: _Inputs,
    cfg: LeakageConfig,
    rows: list[ScopeResult],
    classes: list[Any],
    scores: dict[tuple[str, str], np.ndarray],
    *,
    progress: Progress | None,
    client: Any,
    fallbacks: list[Fallback],
) -> dict[str, Any] | None:
    """Step 8: the dilution sweeps (Appendix E), reusing the scope table's fits."""
    if cfg.dilution is None:
        return None
    from toolaudit.leakage._dilution import run_dilution

    # the sweeps' points that are scope-table rows (the carrier alone; every tool, the
    # full trace's own counts) reuse those fits instead of refitting them
    known = {
        frozenset(inp.engine.scope_tools(scope)): arr
        for (scope, feat), arr in scores.items()
        if feat == cfg.dilution.features
    }
    dilution = run_dilution(
        inp.engine,
        inp.part,
        inp.y,
        inp.groups,
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
    return dilution


def _run(
    examples: Sequence[Example],
    cfg: LeakageConfig,
    *,
    progress: Progress | None,
    client: Any,
    scores_out: dict[tuple[str, str], np.ndarray] | None = None,
) -> LeakageResult:
    """The audit as its steps, in order (each named above by its number)."""
    warnings: list[str] = []
    fallbacks: list[Fallback] = []
    cfg = _dilution_config(cfg, fallbacks)
    inp = _prepare(examples, cfg, progress, warnings)
    scores, prov_out, keep = _fit_scopes(inp, cfg, progress, client)
    if scores_out is not None:
        scores_out.update(scores)
    rows = _scope_table(
        inp, cfg.features, scores, keep, n_boot=cfg.n_boot, seed=cfg.seed, fallbacks=fallbacks
    )
    # step 4: provenance of the top terms, and the token classes they form
    auroc_of = {(r.scope, r.features): r.summary.auroc for r in rows}
    spec_by = {s.name: s for s in cfg.features}
    entries: list[ProvenanceEntry] = describe_terms(
        inp.engine, prov_out, keep, spec_by, inp.part.fit_rows, auroc_of, [e.id for e in examples]
    )
    classes = token_classes(inp.engine, entries, auroc_of)
    provenance = {
        "features": [e.as_json() for e in entries],
        "classes": [c.as_json() for c in classes],
    }
    focus = _focus(cfg.features)
    ranked = sorted(
        (r for r in rows if r.scope != "full" and r.features == focus),
        key=lambda r: -np.nan_to_num(r.summary.auroc, nan=0.0),
    )
    carrier = ranked[0].scope if ranked else inp.tools[0]
    prefix, prefix_scope = _prefix_step(inp, cfg, classes, carrier, warnings, fallbacks)
    presence_row, presence_scope = _presence_step(inp, cfg, fallbacks)
    verdict = _verdict_step(
        inp, rows, scores, classes, carrier, prefix, prefix_scope, presence_scope,
        n_boot=cfg.n_boot, seed=cfg.seed,
    )  # fmt: skip
    ev = inp.part.eval_rows
    roc_scopes = [("full", scores[("full", focus)])] if ("full", focus) in scores else []
    if ranked:
        roc_scopes.append((ranked[0].scope, scores[(ranked[0].scope, focus)]))
    roc = {
        "features": focus,
        "curves": roc_curves(inp.eval_labels, [(s, a[ev]) for s, a in roc_scopes]),
    }
    dilution = _dilution_step(
        inp, cfg, rows, classes, scores, progress=progress, client=client, fallbacks=fallbacks
    )
    if progress is not None:
        progress(1, 1, "done")
    return LeakageResult(
        rows,
        provenance,
        prefix,
        dilution,
        inp.part.as_json(),
        inp.tools,
        warnings,
        verdict=verdict,
        presence=presence_row,
        roc=roc,
        fallbacks=fallbacks,
    )

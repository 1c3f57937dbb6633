"""``run_leakage``: PT2D scope table, provenance, token classes, prefix lookup, dilution."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from toolaudit.errors import ConfigError, DataError
from toolaudit.leakage._engine import Design, PT2DEngine, run_jobs
from toolaudit.leakage._features import FEATURE_SETS, FeatureSpec, LRSpec, validate_spec
from toolaudit.leakage._partition import Partition, make_partition
from toolaudit.leakage._prefix import prefix_lookup
from toolaudit.leakage._scoring import AurocSummary, one_class_groups, summarize
from toolaudit.leakage._tokenclass import ProvenanceEntry, describe_terms, token_classes
from toolaudit.traces import Example

logger = logging.getLogger(__name__)

ProgressFn = Callable[[int, int, str], None]


@dataclass(frozen=True, slots=True)
class DilutionConfig:
    """Appendix E: the carrier (None = the best tool), the order tools are added in
    (None = trace order), synthetic K grid and seeds, the feature set used."""

    features: str = "char_wb_3_5"
    carrier: str | None = None
    order: tuple[str, ...] | None = None
    k_values: tuple[int, ...] = (0, 1, 2, 5, 10, 20)
    n_seeds: int = 5
    pool_tools: tuple[str, ...] | None = None


@dataclass(frozen=True, slots=True)
class LeakageConfig:
    """Every setting of the audit; the defaults are the seed's."""

    features: tuple[FeatureSpec, ...] = tuple(FEATURE_SETS.values())
    scopes: tuple[str, ...] | None = None
    lr: LRSpec = field(default_factory=LRSpec)
    fit: str | None = None
    eval: str | None = None
    cv_folds: int = 5
    n_boot: int = 2000
    seed: int = 0
    top_k: int = 20
    n_jobs: int = 1
    backend: str | None = None
    dilution: DilutionConfig | None = field(default_factory=DilutionConfig)
    prefix_class: str | None = None
    prefix_lengths: tuple[int, ...] = (1, 2, 3)

    def as_json(self) -> dict[str, Any]:
        """The configuration as recorded in ``meta.config``."""
        out = asdict(self)
        out["features"] = [asdict(f) for f in self.features]
        return out


@dataclass(frozen=True, slots=True)
class ScopeResult:
    """One row of the scope x feature-set table."""

    scope: str
    features: str
    summary: AurocSummary
    vocabulary_size: int
    min_df: int | float

    def as_json(self) -> dict[str, Any]:
        """``{scope, features, auroc, ci95, by_group, ...}``."""
        return {
            "scope": self.scope,
            "features": self.features,
            **self.summary.as_json(),
            "vocabulary_size": self.vocabulary_size,
            "min_df": self.min_df,
        }


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
    for analyzer in ("word", "char_wb"):
        group = [s for s in specs if s.analyzer == analyzer]
        for scope in scopes if group else ():
            counts = engine.counts(analyzer, engine.scope_tools(scope))
            for spec in group:
                for i, (fit, ev) in enumerate(folds):
                    design = engine.design(counts, spec, fit, ev)
                    prov = i == len(folds) - 1
                    if prov or (i == 0 and not cv):  # vocabulary only: matrices are large
                        keep[(scope, spec.name)] = Design(None, None, design.vocab, design.min_df)
                    top_k = cfg.top_k if prov else 0
                    yield (scope, spec.name, i), (design.x_fit, y[fit], design.x_eval, top_k)


def run_leakage(
    examples: Sequence[Example],
    config: LeakageConfig | None = None,
    *,
    progress: ProgressFn | None = None,
) -> LeakageResult:
    """Run the PT2D audit (seed Stage 1) on labelled examples.

    >>> from toolaudit.datasets import make_tcr_shortcut  # doctest: +SKIP
    >>> result = run_leakage(make_tcr_shortcut(scale=0.05))  # doctest: +SKIP
    >>> result.table("char_wb_3_5")["thermompnn_ddg"] > 0.6  # doctest: +SKIP
    True
    """
    cfg = config or LeakageConfig()
    if not examples:
        raise DataError("no examples to audit")
    for spec in cfg.features:
        validate_spec(spec)
    warnings: list[str] = []
    part = make_partition(examples, fit=cfg.fit, eval=cfg.eval, cv_folds=cfg.cv_folds)
    engine = PT2DEngine(examples, cfg.features, progress=progress)
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
        total=total,
        progress=progress,
    )
    scores: dict[tuple[str, str], np.ndarray] = {}
    prov_out: dict[tuple[str, str], Any] = {}
    for (scope, feat, i), out in results:
        arr = scores.setdefault((scope, feat), np.full(len(examples), np.nan))
        if i < len(part.folds):
            arr[part.folds[i][1]] = out.scores
        if out.top_pos or out.top_neg:
            prov_out[(scope, feat)] = out
    ev = part.eval_rows
    spec_by = {s.name: s for s in cfg.features}
    rows: list[ScopeResult] = []
    for spec in cfg.features:
        for scope in scopes:
            sc = scores[(scope, spec.name)][ev]
            summ = summarize(y[ev], sc, [groups[i] for i in ev], n_boot=cfg.n_boot, seed=cfg.seed)
            design = keep[(scope, spec.name)]
            rows.append(ScopeResult(scope, spec.name, summ, int(design.vocab.size), design.min_df))
            if design.min_df != spec.min_df:
                warnings.append(
                    f"scope {scope}, {spec.name}: min_df={spec.min_df} leaves no usable "
                    f"vocabulary for this fit partition; used min_df={design.min_df}"
                )
    auroc_of = {(r.scope, r.features): r.summary.auroc for r in rows}
    entries: list[ProvenanceEntry] = describe_terms(
        engine, prov_out, keep, spec_by, part.fit_rows, auroc_of
    )
    classes = token_classes(engine, entries, auroc_of)
    provenance = {
        "features": [e.as_json() for e in entries],
        "classes": [c.as_json() for c in classes],
    }
    prefix = (
        prefix_lookup(engine, classes, part, y, groups, cfg, warnings)
        if classes or cfg.prefix_class
        else None
    )
    dilution = None
    if cfg.dilution is not None:
        from toolaudit.leakage._dilution import run_dilution

        dilution = run_dilution(engine, part, y, groups, cfg, rows, classes, progress=progress)
    if progress is not None:
        progress(1, 1, "done")
    return LeakageResult(rows, provenance, prefix, dilution, part.as_json(), tools, warnings)

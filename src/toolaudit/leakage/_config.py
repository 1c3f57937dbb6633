"""The leakage audit's settings (``LeakageConfig``, ``DilutionConfig``) and its table row
(``ScopeResult``): the types every stage reads, kept apart from the orchestrator
(``_audit``) so no stage imports back into it."""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass, field
from typing import Any

from toolaudit.errors import ConfigError, check_min
from toolaudit.leakage._cluster import check_backend
from toolaudit.leakage._features import FEATURE_SETS, FeatureSpec, LRSpec, validate_spec
from toolaudit.leakage._scoring import AurocSummary

#: Grouped cross-validation folds on a single pool (no fit/eval partition given).
DEFAULT_CV_FOLDS = 5


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

    def __post_init__(self) -> None:
        check_min("dilution_seeds", self.n_seeds, 1)
        for k in self.k_values:
            check_min("dilution_k", k, 0, "integers >= 0")


@dataclass(frozen=True, slots=True)
class LeakageConfig:
    """Every setting of the audit; the defaults are the seed's. ``threads`` is the
    number of threads of the engine's kernels and of each fit's products (0 = every
    core); the results are the same for any value."""

    features: tuple[FeatureSpec, ...] = tuple(FEATURE_SETS.values())
    scopes: tuple[str, ...] | None = None
    lr: LRSpec = field(default_factory=LRSpec)
    fit: str | None = None
    eval: str | None = None
    cv_folds: int = DEFAULT_CV_FOLDS
    n_boot: int = 2000
    seed: int = 0
    top_k: int = 20
    n_jobs: int = 1
    threads: int = 0
    backend: str | None = None
    scheduler: str | None = None
    dilution: DilutionConfig | None = field(default_factory=DilutionConfig)
    prefix_class: str | None = None
    prefix_lengths: tuple[int, ...] = (1, 2, 3)
    presence: bool = True

    def __post_init__(self) -> None:
        """Every value checked on construction (library, registry and CLI callers alike):
        a ConfigError naming the parameter, the values allowed and the value received."""
        if not self.features:
            raise ConfigError.invalid("features", list(FEATURE_SETS), "()")
        for spec in self.features:
            validate_spec(spec)
        check_backend(self.backend)
        if self.n_jobs == 0:
            raise ConfigError.invalid("n_jobs", "a positive integer, or -1 for all cores", 0)
        check_min("threads", self.threads, 0, "an integer >= 0 (0 = every core)")
        check_min("n_boot", self.n_boot, 1)
        check_min("cv_folds", self.cv_folds, 2)
        check_min("seed", self.seed, 0)
        check_min("top_k", self.top_k, 1)

    def fit_threads(self, threads: int) -> int:
        """Kernel threads of each fit when ``n_jobs`` fits run at once (the cores
        shared between them)."""
        jobs = self.n_jobs if self.n_jobs > 0 else (os.cpu_count() or 1)
        return max(1, threads // max(jobs, 1))

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

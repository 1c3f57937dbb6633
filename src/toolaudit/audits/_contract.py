"""The audit contract: a frozen config, ``run(config, ...)`` returning a versioned
pydantic result, and ``sections(result)`` for the report.

Every audit (leakage, redaction, probe, faults, the trace summary, the controlled
benchmark) implements :class:`Audit`. The demo and the report never import an audit by
hand: they iterate over the registry (:data:`toolaudit.audits.AUDITS`), run each audit,
write its results file through :func:`write_result` and render :meth:`Audit.sections`.

Example:
    >>> from toolaudit.audits import AuditResult, ResultMeta
    >>> r = AuditResult(schema_version=1, meta=ResultMeta(command="x", seed=0))
    >>> r.meta.fallbacks
    []
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar, Protocol, TypeVar, runtime_checkable

from pydantic import BaseModel, ConfigDict

from toolaudit.report import RESULTS_SCHEMA_VERSION, Fallback, Finding, ResultMeta, Section

ProgressFn = Callable[[int, int, str], None]


class AuditResult(BaseModel):
    """Base of every results file: ``schema_version`` plus ``meta`` (seed, versions,
    configuration, fallbacks). Subclasses type each top-level key of their file.

    Top-level keys an audit adds later load as extras (``extra="allow"``), so an older
    reader still loads a newer file; the stable keys of DESIGN.md are typed fields.
    """

    model_config = ConfigDict(extra="allow")

    schema_version: int = RESULTS_SCHEMA_VERSION
    meta: ResultMeta

    results_file: ClassVar[str] = "results.json"

    @property
    def fallbacks(self) -> list[Fallback]:
        """Every substitution or relaxation this run made (``meta.fallbacks``)."""
        return list(self.meta.fallbacks)


ConfigT = TypeVar("ConfigT")
ResultT = TypeVar("ResultT", bound=AuditResult)
ConfigT_co = TypeVar("ConfigT_co", covariant=True)


@runtime_checkable
class Audit(Protocol[ConfigT, ResultT]):
    """What every audit implements (one object per audit, listed in the registry).

    Attributes:
        name: the registry name (``leakage``), also the demo's ``--only`` choice.
        title: a short human title for the demo overview.
        result_model: the pydantic model of its results file.
    """

    name: str
    title: str
    result_model: type[ResultT]

    def demo_config(self, *, seed: int, data_root: Path | None) -> ConfigT:
        """The configuration ``toolaudit demo`` runs (embedded defaults, small sizes)."""
        ...

    def run(self, config: ConfigT, *, out_dir: Path, progress: ProgressFn | None = None) -> ResultT:
        """Run the audit; working files go under ``out_dir``; returns the typed result."""
        ...

    def sections(self, result: ResultT) -> list[Section]:
        """The report sections of a result (sentences rendered from its numbers)."""
        ...


@runtime_checkable
class HasHeadline(Protocol):
    """The optional part of the contract: ``headline(result)``, the one finding the
    report's first screen states for this audit (``None``: no verdict at this size).
    An audit without the method states no verdict (see :func:`audit_headline`)."""

    def headline(self, result: Any) -> Finding | None:
        """The audit's headline finding, computed from ``result``."""
        ...


def audit_headline(audit: Audit[Any, Any], result: AuditResult) -> Finding | None:
    """``audit.headline(result)`` when the audit has one, else ``None``."""
    if isinstance(audit, HasHeadline):
        return audit.headline(result)
    return None


def results_path(audit: Audit[Any, Any], out_dir: Path) -> Path:
    """Where ``audit`` writes its results file inside ``out_dir``."""
    name: str = audit.result_model.results_file
    return Path(out_dir) / name


def audit_sections(audit: Audit[Any, Any], result: AuditResult) -> list[Section]:
    """``audit.sections(result)`` with one visible note per recorded fallback at the top
    of the first section (a section titled after the audit when it returned none)."""
    sections = list(audit.sections(result))
    notes = [f.sentence() for f in result.meta.fallbacks]
    if not notes:
        return sections
    if not sections:
        sections = [Section(audit.title)]
    sections[0].blocks[0:0] = notes
    return sections

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

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar, Protocol, Self, TypeVar, runtime_checkable

from pydantic import BaseModel, ConfigDict

from toolaudit.progress import Progress
from toolaudit.report import (
    RESULTS_SCHEMA_VERSION,
    Fallback,
    Finding,
    ResultMeta,
    Section,
    with_fallbacks,
)


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

    @classmethod
    def new(cls, meta: ResultMeta, /, **fields: Any) -> Self:
        """A result with ``meta``, its ``schema_version``, and ``fields`` (one per
        top-level key, validated; only the keys given are written to the file).

        >>> r = AuditResult.new(ResultMeta(command="x", seed=0), note="n")
        >>> r.schema_version, sorted(r.model_fields_set)
        (1, ['meta', 'note', 'schema_version'])
        """
        return cls.model_validate({**fields, "meta": meta, "schema_version": meta.schema_version})

    @classmethod
    def from_payload(cls, payload: Mapping[str, Any], extra: Sequence[Fallback] = ()) -> Self:
        """A result from a payload dict whose ``meta`` is a plain dict (``run_metadata``
        output of an older writer), with ``extra`` fallbacks added to it
        (:func:`meta_from_payload`)."""
        fields = {k: v for k, v in payload.items() if k != "meta"}
        return cls.new(meta_from_payload(payload["meta"], extra), **fields)


def meta_from_payload(meta: dict[str, Any], extra: Sequence[Fallback] = ()) -> ResultMeta:
    """A ``ResultMeta`` from an audit's own ``meta`` dict (``run_metadata`` output, with or
    without ``fallbacks``), plus ``extra`` fallbacks not already recorded there
    (same kind and component)."""
    fallbacks = [Fallback.model_validate(f) for f in meta.get("fallbacks") or []]
    seen = {(f.kind, f.what) for f in fallbacks}
    fallbacks += [f for f in extra if (f.kind, f.what) not in seen]
    return ResultMeta(
        schema_version=int(meta.get("schema_version", RESULTS_SCHEMA_VERSION)),
        command=str(meta.get("command", "")),
        seed=meta.get("seed"),
        config=dict(meta.get("config") or {}),
        versions=dict(meta.get("versions") or {}),
        fallbacks=fallbacks,
    )


class ResultRecord(BaseModel):
    """Base of a record inside a results file (a row, a part, a summary): the stable keys
    are typed fields of the subclass, and keys added later load as extras, as in
    :class:`AuditResult`.

    >>> class Row(ResultRecord):
    ...     task: str
    >>> Row.model_validate({"task": "t1", "later": 2}).model_dump()
    {'task': 't1', 'later': 2}
    """

    model_config = ConfigDict(extra="allow")


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

    def run(self, config: ConfigT, *, out_dir: Path, progress: Progress | None = None) -> ResultT:
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
    """``audit.sections(result)`` with the recorded fallbacks as one table at the top of
    the first section (a section titled after the audit when it returned none)."""
    return with_fallbacks(list(audit.sections(result)), result.meta.fallbacks, title=audit.title)


#: The progress callback of an audit run (``toolaudit.progress.Progress``).
ProgressFn = Progress

"""Token classes: what to redact, where its values come from, and its placeholder.

One type for the concept: the leakage audit emits :class:`TokenClass` candidates
(``leakage.json`` ``provenance.classes``, read back with :meth:`TokenClass.from_json`)
and the redaction audit applies them.

A token class gathers values with the same generating semantics (seed, "Token-Class
Redaction"). Its values come from one or more sources:

* :class:`RegexSource` - a regular expression with exactly one capture group;
* :class:`FieldSource` - the value of a field: ``key: value`` lines, JSON ``"key": value``
  pairs, and the record's own ``fields[key]``;
* :class:`RecordSource` - a value taken from the record itself by a dotted path
  (``meta.pdb_id``, ``fields.peptide``): the row's own identifier or peptide;
* :class:`DetectorSource` - a built-in detector (``pdb_id``, ``uniprot``, ``uuid``,
  ``hex_digest``, ``file_path``, ``version``, ``date``, ``numeric_id``, ``email``,
  ``secret``) or a format pattern (``step_header``, ``trace_banner``,
  ``section_header``, ``xml_tag``, ``field_name``).

A class in ``values`` mode replaces every occurrence of every collected value in every
prompt-bearing field; a class in ``spans`` mode (the format class) replaces only the
matched spans, because its tokens (field names such as ``length``) also occur as words.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, field_validator

from toolaudit.errors import ConfigError
from toolaudit.tokens._detectors import DETECTORS, FORMATS, group_spans

Mode = Literal["values", "spans"]


@dataclass(frozen=True, slots=True)
class RegexSource:
    """A regular expression whose single capture group is the token."""

    pattern: str

    def __post_init__(self) -> None:
        try:
            compiled = re.compile(self.pattern)
        except re.error as exc:
            raise ConfigError(f"invalid regex {self.pattern!r}: {exc}") from None
        if compiled.groups != 1:
            raise ConfigError(
                f"regex {self.pattern!r} must have exactly one capture group; has {compiled.groups}"
            )

    def compiled(self) -> re.Pattern[str]:
        """The compiled pattern (``re`` caches compilation)."""
        return re.compile(self.pattern)


@dataclass(frozen=True, slots=True)
class FieldSource:
    """The value of field ``key`` in ``key: value`` lines, JSON pairs and ``fields``."""

    key: str

    def compiled(self) -> re.Pattern[str]:
        """Line form ``key: value`` (to end of line) or JSON form ``"key": value``."""
        k = re.escape(self.key)
        return re.compile(
            rf"(?m)^[ \t]*(?:[-*][ \t]+)?{k}[ \t]*[:=][ \t]*(\S(?:[^\n]*\S)?)[ \t]*$"
            rf"|\"{k}\"[ \t]*:[ \t]*(?:\"((?:[^\"\\\n]|\\.)*)\"|([^\s,}}\]\"]+))"
        )


@dataclass(frozen=True, slots=True)
class RecordSource:
    """A value read from the record by a dotted path such as ``meta.pdb_id``."""

    path: str


@dataclass(frozen=True, slots=True)
class DetectorSource:
    """A built-in detector or format pattern, by name."""

    name: str

    def __post_init__(self) -> None:
        if self.name not in DETECTORS and self.name not in FORMATS:
            raise ConfigError.invalid("detector", [*DETECTORS, *FORMATS], self.name)

    def compiled(self) -> re.Pattern[str]:
        """The detector's compiled pattern."""
        return DETECTORS.get(self.name) or FORMATS[self.name]


Source = RegexSource | FieldSource | RecordSource | DetectorSource
TextSource = RegexSource | FieldSource | DetectorSource


@dataclass(frozen=True, slots=True)
class TokenClass:
    """One token class, as the leakage audit proposes it and the redaction audit applies it.

    The leakage audit builds a class from a (tool, field) pair: ``pattern`` (one capture
    group) plus its evidence (``tools``, ``fields``, ``support``, ``distinct_values``,
    ``examples``, ``score``, ``terms``, ``same_values_as``). The redaction audit needs
    ``sources``, ``placeholder`` and ``mode``; a class given only a ``pattern`` (empty:
    none) gets the source ``RegexSource(pattern)``, and a class without a placeholder gets
    :func:`placeholder_for` of its name. The regex is validated on construction.

    >>> c = TokenClass("t3.id", "id=([A-Z0-9]+)", tools=("t3",))
    >>> c.placeholder, c.sources
    ('<T3_ID>', (RegexSource(pattern='id=([A-Z0-9]+)'),))
    """

    name: str
    pattern: str = ""
    description: str = ""
    tools: tuple[str, ...] = ()
    fields: tuple[str, ...] = ()
    support: int = 0
    distinct_values: int = 0
    examples: tuple[str, ...] = ()
    score: float = 0.0
    terms: tuple[str, ...] = ()
    same_values_as: tuple[str, ...] = ()
    placeholder: str = ""
    sources: tuple[Source, ...] = ()
    mode: Mode = "values"

    def __post_init__(self) -> None:
        if not self.sources and self.pattern:
            object.__setattr__(self, "sources", (RegexSource(self.pattern),))
        elif self.pattern:
            RegexSource(self.pattern)  # validate
        if not self.sources:
            raise ConfigError(f"token class {self.name!r} has no sources")
        if self.mode not in ("values", "spans"):
            raise ConfigError.invalid("mode", ["values", "spans"], self.mode)
        if not self.placeholder:
            object.__setattr__(self, "placeholder", placeholder_for(self.name))

    def text_sources(self) -> list[TextSource]:
        """Sources that match text (everything except record paths)."""
        return [s for s in self.sources if not isinstance(s, RecordSource)]

    def record_paths(self) -> list[str]:
        """Dotted paths of the record sources."""
        return [s.path for s in self.sources if isinstance(s, RecordSource)]

    def as_json(self) -> dict[str, Any]:
        """The candidate record in ``leakage.json`` ``provenance.classes`` (``kind`` is
        always ``regex``); :meth:`from_json` reads it back."""
        return {
            "name": self.name,
            "kind": "regex",
            "pattern": self.pattern,
            "description": self.description,
            "tools": list(self.tools),
            "fields": list(self.fields),
            "support": self.support,
            "distinct_values": self.distinct_values,
            "example_values": list(self.examples),
            "score": self.score,
            "terms": list(self.terms),
            "same_values_as": list(self.same_values_as),
        }

    @classmethod
    def from_json(cls, record: dict[str, Any] | TokenClassRecord) -> TokenClass:
        """A class from its ``leakage.json`` record, validated (pattern with exactly one
        capture group, typed evidence)."""
        rec = TokenClassRecord.model_validate(record)
        return cls(
            name=rec.name,
            pattern=rec.pattern,
            description=rec.description,
            tools=tuple(rec.tools),
            fields=tuple(rec.fields),
            support=rec.support,
            distinct_values=rec.distinct_values,
            examples=tuple(rec.example_values),
            score=rec.score,
            terms=tuple(rec.terms),
            same_values_as=tuple(rec.same_values_as),
        )


class TokenClassRecord(BaseModel):
    """The on-disk form of a :class:`TokenClass` candidate (``leakage.json``)."""

    model_config = ConfigDict(extra="allow", frozen=True)

    name: str
    kind: Literal["regex"] = "regex"
    pattern: str
    description: str = ""
    tools: list[str] = []
    fields: list[str] = []
    support: int = 0
    distinct_values: int = 0
    example_values: list[str] = []
    score: float = 0.0
    terms: list[str] = []
    same_values_as: list[str] = []

    @field_validator("pattern")
    @classmethod
    def _one_group(cls, value: str) -> str:
        RegexSource(value)
        return value


def _unescape_json(text: str) -> str:
    try:
        return str(json.loads(f'"{text}"'))
    except json.JSONDecodeError:
        return text


def text_matches(source: TextSource, text: str) -> list[tuple[int, int]]:
    """Spans in ``text`` of the tokens matched by a text source."""
    return group_spans(source.compiled(), text)


def values_in_text(source: TextSource, text: str) -> list[str]:
    """Token values a text source finds in ``text`` (JSON string values unescaped)."""
    out: list[str] = []
    for s, e in text_matches(source, text):
        value = text[s:e]
        if isinstance(source, FieldSource) and s > 0 and text[s - 1] == '"':
            value = _unescape_json(value)
        out.append(value)
    return out


def record_values(record: dict[str, Any], path: str) -> list[str]:
    """String values at a dotted path in a record dump (lists contribute each item;
    numbers are turned into text; a missing path gives nothing)."""
    node: Any = record
    for part in path.split("."):
        if isinstance(node, dict) and part in node:
            node = node[part]
        else:
            return []
    return list(_scalars(node))


def _scalars(node: Any) -> Iterator[str]:
    if isinstance(node, bool) or node is None:
        return
    if isinstance(node, str | int | float):
        yield str(node)
    elif isinstance(node, list | tuple):
        for item in node:
            yield from _scalars(item)


def placeholder_for(name: str) -> str:
    """The conventional placeholder of a class name: ``pdb_id`` -> ``<PDB_ID>``."""
    return "<" + re.sub(r"[^A-Za-z0-9]+", "_", name).strip("_").upper() + ">"


def make_class(
    name: str,
    sources: Iterable[Source],
    *,
    placeholder: str | None = None,
    mode: Mode = "values",
    description: str = "",
) -> TokenClass:
    """Build a token class with the conventional placeholder unless one is given."""
    return TokenClass(
        name,
        placeholder=placeholder or placeholder_for(name),
        sources=tuple(sources),
        mode=mode,
        description=description,
    )

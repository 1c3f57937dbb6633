"""Apply one token class to every prompt-bearing field of every row, then look for any
redacted value that survives (the audit refuses to score a class with residuals).

Prompt-bearing fields of an :class:`~toolaudit.traces.Example`: ``prompt``, every
message's ``content``, every tool section's ``content`` (the evidence), every value of
``fields`` (the question's inputs) and every string anywhere under ``meta`` (duplicate
copies such as ``meta["extra_info"]``), recursively. ``id``, ``label``, ``group``,
``split`` and ``answer`` are never touched.

Per row, in ``values`` mode: (1) the values the class matches are collected from the
original record (text sources over all prompt-bearing strings, record sources from the
record itself); (2) the matched spans are replaced; (3) every remaining occurrence of each
collected value is replaced in every prompt-bearing field (token-edge aware, longest value
first), so an id redacted from a file name is also caught in ``complex_id`` and in the
meta copies; (4) the residual check re-reads the redacted record and searches every
prompt-bearing string for each recorded value by plain substring search, independent of
the patterns, and re-runs the class's text sources. In ``spans`` mode (the
format class) only step (2) applies, repeated until nothing matches.

Placeholders and the scorer's answer tags (:data:`PROTECTED`: ``<answer>`` and
``</answer>``, the answer instruction every variant must keep, so that format redaction
preserves output validity as in the seed) are never matched or replaced.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from toolaudit.errors import DataError
from toolaudit.redaction._scoring import ANSWER_CLOSE, ANSWER_OPEN
from toolaudit.tokens import L, R, TokenClass, record_values, text_matches, values_in_text
from toolaudit.traces import Example

_MAX_PASSES = 5
_PLACEHOLDER = re.compile(r"<[A-Z][A-Z0-9_]*>")
#: Literal strings no class replaces: the answer protocol the scorer reads.
PROTECTED: tuple[str, ...] = (ANSWER_OPEN, ANSWER_CLOSE)
_SHIELD = re.compile("|".join([_PLACEHOLDER.pattern, *(re.escape(t) for t in PROTECTED)]))
LOCATIONS = ("prompt", "messages", "tools", "fields", "meta")


class RedactionResidualError(DataError):
    """A redacted value (or a token the class still matches) survives in a
    prompt-bearing field after redaction."""


@dataclass(frozen=True, slots=True)
class RedactionOutcome:
    """One class applied to a set of rows: the redacted rows and the intervention size."""

    name: str
    placeholder: str
    examples: list[Example]
    replacements: int
    by_location: dict[str, int]
    rows_affected: int
    distinct_values: int
    residuals: int = 0
    checked_values: int = 0
    notes: list[str] = field(default_factory=list)


def _mask(text: str) -> str:
    """Placeholders and :data:`PROTECTED` tags blanked out (same length) so nothing inside
    them is matched."""
    return _SHIELD.sub(lambda m: "\x00" * len(m.group(0)), text)


def _merge(spans: list[tuple[int, int]], masked: str) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for s, e in sorted(spans):
        if "\x00" in masked[s:e]:
            continue  # never split or re-redact a placeholder
        if out and s < out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], e))
        else:
            out.append((s, e))
    return out


def _splice(text: str, spans: list[tuple[int, int]], placeholder: str) -> str:
    parts: list[str] = []
    last = 0
    for s, e in spans:
        parts += [text[last:s], placeholder]
        last = e
    parts.append(text[last:])
    return "".join(parts)


def value_pattern(values: Sequence[str]) -> re.Pattern[str] | None:
    """One token-edge-aware alternation of ``values``, longest first (``None`` if empty)."""
    if not values:
        return None
    alts = "|".join(re.escape(v) for v in sorted(set(values), key=lambda v: (-len(v), v)))
    return re.compile(f"{L}(?:{alts}){R}")


def _source_spans(cls: TokenClass, masked: str) -> list[tuple[int, int]]:
    spans: list[tuple[int, int]] = []
    for src in cls.text_sources():
        spans += text_matches(src, masked)
    return _merge(spans, masked)


def redact_text(text: str, cls: TokenClass, values: re.Pattern[str] | None) -> tuple[str, int]:
    """Redact one string; returns the new text and the number of placeholders inserted."""
    n = 0
    for _ in range(_MAX_PASSES):
        spans = _source_spans(cls, _mask(text))
        if not spans:
            break
        text = _splice(text, spans, cls.placeholder)
        n += len(spans)
    if values is not None:
        masked = _mask(text)
        spans = _merge([m.span() for m in values.finditer(masked)], masked)
        text = _splice(text, spans, cls.placeholder)
        n += len(spans)
    return text, n


def _walk(node: Any, path: str, fn: Callable[[str, str], str]) -> Any:
    if isinstance(node, str):
        return fn(path, node)
    if isinstance(node, dict):
        return {k: _walk(v, f"{path}.{k}", fn) for k, v in node.items()}
    if isinstance(node, list):
        return [_walk(v, f"{path}[{i}]", fn) for i, v in enumerate(node)]
    return node


def map_prompt_strings(record: dict[str, Any], fn: Callable[[str, str], str]) -> dict[str, Any]:
    """A copy of an Example dump with ``fn(path, text)`` applied to every prompt-bearing
    string (paths such as ``messages[1].content`` or ``meta.extra_info.prompt``)."""
    out = dict(record)
    if isinstance(record.get("prompt"), str):
        out["prompt"] = fn("prompt", record["prompt"])
    if record.get("messages"):
        out["messages"] = [
            {**m, "content": fn(f"messages[{i}].content", m["content"])}
            for i, m in enumerate(record["messages"])
        ]
    out["tools"] = [
        {**t, "content": fn(f"tools[{i}].content", t["content"])}
        for i, t in enumerate(record.get("tools") or [])
    ]
    out["fields"] = {k: fn(f"fields.{k}", v) for k, v in (record.get("fields") or {}).items()}
    out["meta"] = _walk(record.get("meta") or {}, "meta", fn)
    return out


def prompt_strings(record: dict[str, Any]) -> Iterator[tuple[str, str]]:
    """Every prompt-bearing string of an Example dump as ``(path, text)``."""
    found: list[tuple[str, str]] = []

    def grab(path: str, text: str) -> str:
        found.append((path, text))
        return text

    map_prompt_strings(record, grab)
    yield from found


def _location(path: str) -> str:
    return re.split(r"[.\[]", path, maxsplit=1)[0]


def collect_values(record: dict[str, Any], cls: TokenClass) -> list[str]:
    """The values class ``cls`` matches in one original record (sorted, de-duplicated,
    placeholders and blanks dropped)."""
    found: set[str] = set()
    for path in cls.record_paths():
        found.update(record_values(record, path))
    for _, text in prompt_strings(record):
        for src in cls.text_sources():
            found.update(values_in_text(src, text))
    return sorted(v.strip() for v in found if v.strip() and not _PLACEHOLDER.fullmatch(v.strip()))


@dataclass(frozen=True, slots=True)
class Residual:
    """A redacted value (or a token the class still matches) found after redaction."""

    row: str
    path: str
    value: str
    count: int
    kind: Literal["value", "pattern"]

    def message(self, cls_name: str) -> str:
        """One line naming the class, row, field and what survived."""
        what = "still contains" if self.kind == "value" else "still matches"
        return (
            f"residual after redacting class {cls_name!r}: row {self.row!r}, field "
            f"'{self.path}' {what} {self.value!r}"
        )


def find_residuals(example: Example, cls: TokenClass, values: Sequence[str]) -> list[Residual]:
    """Every survivor in the prompt-bearing fields of a redacted row.

    Independent of the class's patterns, each value recorded during redaction is looked
    for by plain substring search (so a copy glued to other characters, as in URL-encoded
    text, is found although the token-edge-aware replacement missed it); then the class's
    text sources are run again. Placeholders are blanked out first.
    """
    out: list[Residual] = []
    wanted = sorted(set(values), key=lambda v: (-len(v), v))
    for path, text in prompt_strings(example.model_dump()):
        masked = _mask(text)
        for value in wanted:
            n = masked.count(value)
            if n:
                out.append(Residual(example.id, path, value, n, "value"))
        for s, e in _source_spans(cls, masked):
            out.append(Residual(example.id, path, masked[s:e], 1, "pattern"))
    return out


def check_residuals(example: Example, cls: TokenClass, values: Sequence[str]) -> None:
    """Raise :class:`RedactionResidualError` naming the first survivor that
    :func:`find_residuals` reports."""
    found = find_residuals(example, cls, values)
    if found:
        raise RedactionResidualError(found[0].message(cls.name))


@dataclass(frozen=True, slots=True)
class RowRedaction:
    """One row redacted with one class: the new row, replacements per location, the
    values recorded, and what survived."""

    example: Example
    counts: Counter[str]
    values: list[str]
    residuals: list[Residual]


def redact_row(example: Example, cls: TokenClass) -> RowRedaction:
    """Redact one row with one class and scan it for residuals (never raises on them)."""
    record = example.model_dump()
    values = collect_values(record, cls) if cls.mode == "values" else []
    pattern = value_pattern(values)
    counts: Counter[str] = Counter()

    def fn(path: str, text: str) -> str:
        new, n = redact_text(text, cls, pattern)
        if n:
            counts[_location(path)] += n
        return new

    redacted = Example.model_validate(map_prompt_strings(record, fn))
    return RowRedaction(redacted, counts, values, find_residuals(redacted, cls, values))


def redact_example(example: Example, cls: TokenClass) -> tuple[Example, Counter[str], list[str]]:
    """Redact one row with one class; returns the new row, replacements per location
    and the values collected.

    Raises:
        RedactionResidualError: a recorded value or a class match survives.
    """
    out = redact_row(example, cls)
    if out.residuals:
        raise RedactionResidualError(out.residuals[0].message(cls.name))
    return out.example, out.counts, out.values


def redact_examples(examples: Sequence[Example], cls: TokenClass) -> RedactionOutcome:
    """Apply ``cls`` to every row; labels and reference answers are untouched.

    ``residuals`` counts the survivors :func:`find_residuals` reports over all rows (the
    first few are described in ``notes``); the caller decides to refuse scoring.
    """
    rows: list[Example] = []
    total: Counter[str] = Counter()
    affected = 0
    distinct: set[str] = set()
    checked = 0
    residuals: list[Residual] = []
    for ex in examples:
        out = redact_row(ex, cls)
        new = out.example
        if new.label != ex.label or new.answer != ex.answer:  # pragma: no cover - invariant
            raise RedactionResidualError(f"row {ex.id!r}: label or answer changed by redaction")
        rows.append(new)
        total.update(out.counts)
        affected += bool(out.counts)
        distinct.update(out.values)
        checked += len(out.values)
        residuals += out.residuals
    return RedactionOutcome(
        name=cls.name,
        placeholder=cls.placeholder,
        examples=rows,
        replacements=sum(total.values()),
        by_location={loc: total.get(loc, 0) for loc in LOCATIONS},
        rows_affected=affected,
        distinct_values=len(distinct),
        residuals=sum(r.count for r in residuals),
        checked_values=checked,
        notes=[r.message(cls.name) for r in residuals[:5]],
    )

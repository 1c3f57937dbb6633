"""Feature provenance: where a predictive n-gram comes from, and candidate token classes.

For a top-weighted n-gram we search the sections of its scope for occurrences and name
the serialized field each sits in: the key of a ``key: value`` line (a value may start
on the line after ``key:``), or a JSON path when the section is JSON. Occurrences are
grouped into *candidate token classes* by (tool, field); each class gets a regular
expression with one capture group (for example ``ThermoMPNN_inference_(\\w+)\\.csv`` or
``complex_id:\\s*(\\w+)``) inferred from the field's values across examples, in the form
the redaction audit takes directly.
"""

from __future__ import annotations

import json
import re
from bisect import bisect_right
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from toolaudit.tokens import TokenClass as TokenClass  # the one token-class type (issue 14)

_KEY_LINE = re.compile(r"^\s*([A-Za-z_][\w .\-/]{0,60}?)\s*[:=]\s*(.*)$")
_PAIR = re.compile(r"(?:^|(?<=[\s,;{(\[]))([A-Za-z_][\w.\-/]{0,60}?)\s*[:=](?!/)")
_MAX_ROWS = 400
_MAX_CONTEXTS = 3


def term_regex(term: str, analyzer: str) -> re.Pattern[str]:
    """A regex finding ``term`` (lowercased n-gram) in lowercased text."""
    if analyzer == "char_wb":
        core = term.strip(" ")
        left = r"(?<!\S)" if term.startswith(" ") else ""
        right = r"(?!\S)" if term.endswith(" ") and len(term) > 1 else ""
        return re.compile(left + re.escape(core) + right)
    parts = term.split(" ")
    gap = r"\b(?:\W|\b\w\b)*?\b"
    return re.compile(r"\b" + gap.join(re.escape(p) for p in parts) + r"\b")


def _json_leaves(obj: Any, path: str = "$") -> list[tuple[str, str]]:
    if isinstance(obj, dict):
        out = []
        for k, v in obj.items():
            out += [(f"{path}.{k}", str(k).lower())] if not isinstance(v, dict | list) else []
            out += _json_leaves(v, f"{path}.{k}")
        return out
    if isinstance(obj, list):
        return [leaf for i, v in enumerate(obj) for leaf in _json_leaves(v, f"{path}[{i}]")]
    return [(path, json.dumps(obj, ensure_ascii=False).strip('"').lower())]


class FieldIndex:
    """``field_at`` for many positions of one text in linear time overall: line starts
    are found once, and each line's ``key:`` pairs are scanned once, on first use."""

    def __init__(self, text: str) -> None:
        self.text = text
        self._starts: list[int] | None = None
        self._pairs: dict[int, list[tuple[int, int, str]]] = {}

    def _line_starts(self) -> list[int]:
        if self._starts is None:
            starts = [0]
            find = self.text.find
            i = find("\n")
            while i >= 0:
                starts.append(i + 1)
                i = find("\n", i + 1)
            self._starts = starts
        return self._starts

    def _line_pairs(self, idx: int, line: str) -> list[tuple[int, int, str]]:
        pairs = self._pairs.get(idx)
        if pairs is None:
            pairs = [(m.start(1), m.end(), m.group(1)) for m in _PAIR.finditer(line)]
            self._pairs[idx] = pairs
        return pairs

    def field(self, pos: int) -> str:
        """The serialized field of the character at ``pos`` (see ``field_at``)."""
        starts = self._line_starts()
        idx = bisect_right(starts, pos) - 1
        start = starts[idx]
        end = starts[idx + 1] - 1 if idx + 1 < len(starts) else len(self.text)
        line = self.text[start:end]
        off = pos - start
        pairs = self._line_pairs(idx, line)
        # the pair whose key holds ``off``, else the last pair ending at or before it
        j = bisect_right(pairs, (off, len(line) + 1, "")) - 1
        if j >= 0 and pairs[j][0] <= off < pairs[j][1]:
            return f"{pairs[j][2]} (key)"
        last = None
        while j >= 0:
            if pairs[j][1] <= off:
                last = pairs[j][2]
                break
            j -= 1
        if last:
            return last
        if idx > 0:
            prev = self.text[starts[idx - 1] : start - 1]
            pm = _KEY_LINE.match(prev)
            if pm and not pm.group(2):
                return pm.group(1).strip()
        return "(line)"


def field_at(text: str, pos: int) -> str:
    """The serialized field of the character at ``pos``: the nearest ``key:`` / ``key=``
    before it on its line (``key (key)`` when ``pos`` is inside the key), else the bare
    ``key:`` line just above, else ``(line)``. For many positions of one text, use
    :class:`FieldIndex` (linear instead of quadratic in the line length)."""
    return FieldIndex(text).field(pos)


def json_field(text: str, core: str) -> str | None:
    """JSON path of the first leaf of ``text`` (a JSON section) containing ``core``."""
    stripped = text.lstrip()
    if not stripped.startswith(("{", "[")):
        return None
    try:
        doc = json.loads(stripped)
    except ValueError:
        return None
    for path, value in _json_leaves(doc):
        if core in value:
            return re.sub(r"\[\d+\]", "[*]", path)
    return None


@dataclass(slots=True)
class TermSource:
    """Where a term occurs: counts per (tool, field) and a few contexts."""

    fields: Counter[tuple[str, str]] = field(default_factory=Counter)
    contexts: list[str] = field(default_factory=list)
    rows: int = 0
    #: the first rows (in the order searched) whose sections hold the term
    first_rows: list[int] = field(default_factory=list)


def locate(
    term: str,
    analyzer: str,
    texts: dict[str, list[str]],
    tools: Sequence[str],
    rows: Sequence[int],
    lowered: dict[tuple[str, int], str] | None = None,
) -> TermSource:
    """Occurrences of ``term`` in the sections ``tools`` of ``rows`` (up to 400 rows).

    ``lowered`` caches the lowercased texts between calls (the audit looks up hundreds
    of terms in the same rows)."""
    rx = term_regex(term, analyzer)
    core = term.strip(" ")
    src = TermSource()
    for row in list(rows)[:_MAX_ROWS]:
        hit = False
        for tool in tools:
            original = texts[tool][row]
            if lowered is None:
                lower = original.lower()
            else:
                got = lowered.get((tool, row))
                if got is None:
                    got = lowered[(tool, row)] = original.lower()
                lower = got
            same = len(lower) == len(original)
            index: FieldIndex | None = None
            json_name: str | None = None
            for m in rx.finditer(lower):
                if index is None:  # once per text: JSON parse and line index
                    json_name = json_field(lower, core)
                    index = FieldIndex(original if same else lower)
                hit = True
                name = json_name or index.field(m.start())
                src.fields[(tool, name)] += 1
                if len(src.contexts) < _MAX_CONTEXTS:
                    shown = original if same else lower
                    a, b = max(0, m.start() - 40), min(len(shown), m.end() + 40)
                    src.contexts.append(shown[a:b].replace("\n", " ⏎ "))
        src.rows += int(hit)
        if hit and len(src.first_rows) < _MAX_CONTEXTS:
            src.first_rows.append(row)
    return src


def field_values(texts: list[str], key: str) -> list[str | None]:
    """The value of ``key`` in each text (``key: value`` or ``key:`` + next line)."""
    rx = re.compile(
        r"(?:^|(?<=[\s,;{(\[]))[ \t]*" + re.escape(key) + r"[ \t]*[:=][ \t]*(.*)$", re.M
    )
    out: list[str | None] = []
    for text in texts:
        m = rx.search(text)
        if not m:
            out.append(None)
            continue
        value = m.group(1).strip()
        if not value:
            nxt = text[m.end() + 1 :].split("\n", 1)[0]
            value = nxt.strip()
        out.append(value or None)
    return out


def _common_prefix(values: list[str]) -> str:
    lo, hi = min(values), max(values)
    n = 0
    while n < min(len(lo), len(hi)) and lo[n] == hi[n]:
        n += 1
    return lo[:n]


def _capture_class(parts: list[str], *, has_suffix: bool) -> str:
    if parts and all(re.fullmatch(r"\d+", p) for p in parts):
        return r"\d+"
    if parts and all(re.fullmatch(r"\w+", p) for p in parts):
        return r"\w+"
    return r"\S+?" if has_suffix else r"\S+"


def infer_pattern(key: str, values: list[str], term: str) -> tuple[str, str]:
    """A regex with one capture group for the variable part of a field's values.

    Returns ``(pattern, description)``. The token of each value that contains ``term``
    is aligned across examples; its common prefix (cut back to a non-alphanumeric
    character and to the last path component) and common suffix anchor the capture.
    """
    core = term.strip(" ").lower()
    tokens = []
    for v in values:
        words = v.split()
        hit = [w for w in words if core in w.lower()]
        tokens.append(hit[0] if hit else (words[-1] if words else ""))
    tokens = [t for t in tokens if t]
    prefix = _common_prefix(tokens) if len(tokens) > 1 else ""
    while prefix and prefix[-1].isalnum():
        prefix = prefix[:-1]
    suffix = _common_prefix([t[len(prefix) :][::-1] for t in tokens])[::-1] if tokens else ""
    while suffix and suffix[0].isalnum():
        suffix = suffix[1:]
    parts = [t[len(prefix) : len(t) - len(suffix)] for t in tokens]
    if any(not p for p in parts):
        suffix, parts = "", [t[len(prefix) :] for t in tokens]
    anchor = re.split(r"[/\\]", prefix)[-1]
    cls = _capture_class(parts, has_suffix=bool(suffix))
    if anchor or suffix:
        pattern = re.escape(anchor) + f"({cls})" + re.escape(suffix)
        desc = f"value after `{anchor}`" if anchor else f"value before `{suffix}`"
        return pattern, desc + f" in field `{key}`"
    return re.escape(key) + r"\s*[:=]\s*" + f"({cls})", f"value of `{key}`"


def captures(pattern: str, texts: list[str]) -> list[str | None]:
    """First capture of ``pattern`` in each text (None when it does not match)."""
    rx = re.compile(pattern)
    out: list[str | None] = []
    for t in texts:
        m = rx.search(t)
        out.append(m.group(1) if m else None)
    return out


def build_class(
    tool: str, key: str, term: str, texts: list[str], score: float, terms: list[str]
) -> TokenClass | None:
    """Infer the class of ``key`` values in ``tool`` (None when the field is not found)."""
    values = [v for v in field_values(texts, key) if v]
    if not values:
        return None
    pattern, desc = infer_pattern(key, values, term)
    got = [c for c in captures(pattern, texts) if c is not None]
    if not got:
        return None
    distinct = sorted(set(got))
    return TokenClass(
        name=f"{tool}.{key}",
        pattern=pattern,
        description=desc,
        tools=(tool,),
        fields=(key,),
        support=len(got),
        distinct_values=len(distinct),
        examples=tuple(distinct[:5]),
        score=score,
        terms=tuple(terms[:8]),
    )


def duplicate_fields(
    values: list[str | None], texts: dict[str, list[str]], skip: str
) -> list[tuple[str, str, float]]:
    """Other (tool, field) pairs that repeat the captured ``values`` of a class."""
    found: list[tuple[str, str, float]] = []
    rows = [i for i, v in enumerate(values) if v]
    if not rows:
        return found
    for tool, col in texts.items():
        if tool == skip:
            continue
        fields: Counter[str] = Counter()
        hits = 0
        for i in rows[:_MAX_ROWS]:
            v = values[i]
            assert v is not None
            m = re.search(r"(?<![\w.])" + re.escape(v) + r"(?![\w])", col[i])
            if m:
                hits += 1
                fields[field_at(col[i], m.start())] += 1
        rate = hits / min(len(rows), _MAX_ROWS)
        if rate >= 0.5 and fields:
            found.append((tool, fields.most_common(1)[0][0], rate))
    return found

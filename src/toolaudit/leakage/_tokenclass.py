"""Top-weighted n-grams with their provenance, grouped into candidate token classes."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from toolaudit.leakage._engine import PT2DEngine
from toolaudit.leakage._features import FeatureSpec
from toolaudit.leakage._provenance import (
    TokenClass,
    build_class,
    captures,
    duplicate_fields,
    locate,
)

_MAX_CLASSES = 8


@dataclass(frozen=True, slots=True)
class ProvenanceEntry:
    """One top-weighted n-gram of a scope's diagnostic classifier."""

    scope: str
    features: str
    term: str
    weight: float
    fields: list[dict[str, Any]]
    contexts: list[str]
    rows: int
    #: ids of the first examples whose sections hold the term (to open them in a viewer)
    example_ids: list[str]

    @property
    def direction(self) -> str:
        """``positive`` (favours label 1) or ``negative``."""
        return "positive" if self.weight > 0 else "negative"

    def as_json(self) -> dict[str, Any]:
        """The JSON record."""
        return {
            "scope": self.scope,
            "features": self.features,
            "direction": self.direction,
            "term": self.term,
            "weight": self.weight,
            "fields": self.fields,
            "contexts": self.contexts,
            "rows_with_term": self.rows,
            "example_ids": self.example_ids,
        }


def describe_terms(
    engine: PT2DEngine,
    outputs: Mapping[tuple[str, str], Any],
    designs: Mapping[tuple[str, str], Any],
    specs: Mapping[str, FeatureSpec],
    fit_rows: np.ndarray,
    auroc_of: Mapping[tuple[str, str], float],
    example_ids: Sequence[str],
) -> list[ProvenanceEntry]:
    """Provenance of each scope's top positive and negative n-grams (fit rows only);
    ``example_ids`` are the ids of the engine's rows, in order."""
    entries: list[ProvenanceEntry] = []
    texts = engine.columns.texts
    rows = [int(r) for r in fit_rows]
    lowered: dict[tuple[str, int], str] = {}
    for (scope, feat), out in sorted(outputs.items()):
        analyzer = specs[feat].analyzer
        vocab = designs[(scope, feat)].vocab
        tops = out.top_pos + out.top_neg
        if not tops:
            continue
        strings = engine.terms(analyzer, vocab[np.array([c for c, _ in tops])])
        for (_, weight), term in zip(tops, strings, strict=True):
            src = locate(term, analyzer, texts, engine.scope_tools(scope), rows, lowered)
            fields = [
                {"tool": t, "field": f, "count": n} for (t, f), n in src.fields.most_common(4)
            ]
            entries.append(
                ProvenanceEntry(
                    scope,
                    feat,
                    term,
                    weight,
                    fields,
                    src.contexts,
                    src.rows,
                    [example_ids[r] for r in src.first_rows],
                )  # fmt: skip
            )
    return entries


def token_classes(
    engine: PT2DEngine,
    entries: list[ProvenanceEntry],
    auroc_of: Mapping[tuple[str, str], float],
) -> list[TokenClass]:
    """Candidate token classes, strongest first.

    A (tool, field) pair scores the share of its scope's top-weight mass that it holds,
    times how far that scope's AUROC is above chance, summed over scopes and feature
    sets. Fields that repeat a class's captured values elsewhere (the same identifier in
    another tool) become linked classes.
    """
    mass: dict[tuple[str, str], float] = defaultdict(float)
    terms: dict[tuple[str, str], list[tuple[float, str]]] = defaultdict(list)
    totals: dict[tuple[str, str], float] = defaultdict(float)
    for e in entries:
        totals[(e.scope, e.features)] += abs(e.weight)
    for e in entries:
        lift = max(0.0, auroc_of.get((e.scope, e.features), 0.5) - 0.5)
        if not e.fields or lift == 0.0:
            continue
        top = e.fields[0]
        if top["field"] in ("(line)",) or top["field"].endswith("(key)"):
            continue
        key = (top["tool"], top["field"])
        share = abs(e.weight) / max(totals[(e.scope, e.features)], 1e-12)
        mass[key] += share * lift
        terms[key].append((abs(e.weight), e.term))
    texts = engine.columns.texts
    classes: list[TokenClass] = []
    seen: set[str] = set()
    for (tool, fld), score in sorted(mass.items(), key=lambda kv: (-kv[1], kv[0])):
        if len(classes) >= _MAX_CLASSES:
            break
        ranked = list(dict.fromkeys(t for _, t in sorted(terms[(tool, fld)], reverse=True)))
        cls = build_class(tool, fld, ranked[0], texts[tool], score, ranked)
        if cls is None or cls.name in seen:
            continue
        seen.add(cls.name)
        values = captures(cls.pattern, texts[tool])
        linked = []
        for other_tool, other_field, _rate in duplicate_fields(values, texts, tool):
            if other_field == "(line)":
                continue
            dup = build_class(other_tool, other_field, "", texts[other_tool], 0.0, [])
            if dup is None:
                continue
            linked.append(dup.name)
            if dup.name not in seen:
                seen.add(dup.name)
                classes.append(
                    TokenClass(
                        dup.name,
                        dup.pattern,
                        dup.description,
                        dup.tools,
                        dup.fields,
                        dup.support,
                        dup.distinct_values,
                        dup.examples,
                        0.0,
                        (),
                        (cls.name,),
                    )
                )
        classes.append(
            TokenClass(
                cls.name,
                cls.pattern,
                cls.description,
                cls.tools,
                cls.fields,
                cls.support,
                cls.distinct_values,
                cls.examples,
                cls.score,
                cls.terms,
                tuple(linked),
            )
        )
    classes.sort(key=lambda c: (-c.score, c.name))
    return classes

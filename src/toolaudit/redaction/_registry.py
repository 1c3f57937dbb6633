"""The registry of built-in token classes, class specs from the command line, and
candidate classes proposed by the leakage audit (``leakage.json`` ``provenance``)."""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from toolaudit.errors import ConfigError
from toolaudit.tokens import (
    DETECTORS,
    FORMATS,
    DetectorSource,
    FieldSource,
    RecordSource,
    RegexSource,
    Source,
    TokenClass,
    make_class,
)
from toolaudit.traces import Example

logger = logging.getLogger(__name__)

# The controlled benchmark's tools (DESIGN.md), used to pick its default variants.
TCR_TOOLS = (
    "cdr3b_biophysics",
    "mcpas_retrieval",
    "thermompnn_ddg",
    "stability_summary",
    "interface_analysis",
)

_PDB_ID = make_class(
    "pdb_id",
    [
        # The seed's Tool 3 file name and Tool 5 complex id, then the row's own id.
        RegexSource(r"ThermoMPNN_inference_([A-Za-z0-9]+)\.csv"),
        FieldSource("complex_id"),
        FieldSource("pdb_id"),
        RecordSource("meta.pdb_id"),
        RecordSource("fields.pdb_id"),
        RecordSource("meta.extra_info.pdb_id"),
        DetectorSource("pdb_id"),
    ],
    description="entry identifiers: the Tool 3 file-name suffix, complex_id, the row's pdb_id",
)
_PEPTIDE = make_class(
    "peptide",
    [
        RecordSource("fields.peptide"),
        RecordSource("meta.peptide"),
        RecordSource("meta.extra_info.peptide"),
        FieldSource("peptide"),
    ],
    description="the row's epitope sequence (non-overlapping control)",
)
_FORMAT = make_class(
    "format",
    [DetectorSource(name) for name in FORMATS],
    mode="spans",
    description="step headers, trace banners, section headers, XML tags (never the scorer's "
    "<answer> tags) and field names",
)

BUILTIN_CLASSES: dict[str, TokenClass] = {
    "pdb_id": _PDB_ID,
    "peptide": _PEPTIDE,
    "format": _FORMAT,
    **{
        name: make_class(name, [DetectorSource(name)], description=f"built-in {name} detector")
        for name in DETECTORS
        if name != "pdb_id"
    },
}

_KINDS = ("regex", "field", "record", "detector")


def _source(kind: str, arg: str) -> Source:
    if kind == "regex":
        return RegexSource(arg)
    if kind == "field":
        return FieldSource(arg)
    if kind == "record":
        return RecordSource(arg)
    if kind == "detector":
        return DetectorSource(arg)
    raise ConfigError.invalid("class source kind", _KINDS, kind)


def parse_class_specs(
    specs: Sequence[str], *, mined: Sequence[TokenClass] = ()
) -> list[TokenClass]:
    """Token classes from ``--class`` values, in order of first mention.

    ``NAME`` is a built-in class or, failing that, the candidate of that name in
    ``mined`` (the classes of ``--class-from``, :func:`classes_from_leakage`);
    ``NAME=KIND:ARG`` adds a source (``regex:``, ``field:``, ``record:`` or
    ``detector:``) to class ``NAME``; repeating a name adds sources.

    >>> [c.name for c in parse_class_specs(["pdb_id", r"build=regex:build-(\\d+)"])]
    ['pdb_id', 'build']
    """
    candidates = {c.name: c for c in mined}
    order: list[str] = []
    sources: dict[str, list[Source]] = {}
    base: dict[str, TokenClass] = {}
    for spec in specs:
        name, sep, rest = spec.partition("=")
        name = name.strip()
        if not name:
            raise ConfigError.invalid("--class", "NAME or NAME=KIND:ARG", spec)
        if name not in sources:
            order.append(name)
            sources[name] = []
        if not sep:
            known = BUILTIN_CLASSES.get(name) or candidates.get(name)
            if known is None:
                allowed = sorted(BUILTIN_CLASSES) + (
                    [f"a --class-from class ({', '.join(candidates)})"]
                    if candidates
                    else ["a --class-from class (with --class-from LEAKAGE_JSON)"]
                )
                raise ConfigError.invalid("--class", allowed, name)
            base[name] = known
            sources[name].extend(known.sources)
            continue
        kind, colon, arg = rest.partition(":")
        if not colon or not arg:
            raise ConfigError.invalid(
                "--class", "NAME=KIND:ARG with KIND in " + ", ".join(_KINDS), spec
            )
        sources[name].append(_source(kind.strip(), arg))
    out: list[TokenClass] = []
    for name in order:
        builtin = BUILTIN_CLASSES.get(name)
        mode = builtin.mode if builtin else "values"
        # dict.fromkeys keeps order while dropping repeats.
        kept = list(dict.fromkeys(sources[name]))
        known = base.get(name)
        # a class named as it is (a built-in, as a --config replay of the defaults names
        # it, or a mined candidate) is that class, description and evidence included, so
        # its results are the same byte for byte
        if known is not None and kept == list(known.sources):
            out.append(known)
            continue
        out.append(make_class(name, kept, mode=mode))
    return out


def select_classes(specs: Sequence[str], mined: Sequence[TokenClass]) -> list[TokenClass]:
    """The classes of ``--class`` and ``--class-from`` together: the ``--class`` specs
    (:func:`parse_class_specs`), then every mined candidate, unless a ``--class NAME``
    names candidates, in which case only those are taken (so ``--class-from F --class
    NAME`` tests the one class ``NAME`` of ``F``).

    >>> mined = [make_class("t.path", [RegexSource(r"x(\\d)")])]
    >>> [c.name for c in select_classes(["pdb_id"], mined)]
    ['pdb_id', 't.path']
    >>> [c.name for c in select_classes(["t.path"], mined)]
    ['t.path']
    """
    classes = parse_class_specs(specs, mined=mined)
    have = {c.name for c in classes}
    names = {c.name for c in mined}
    if have & names - set(BUILTIN_CLASSES):
        return classes
    return classes + [c for c in mined if c.name not in have]


def classes_from_leakage(path: str | Path) -> list[TokenClass]:
    """Candidate token classes proposed by the leakage audit.

    Loads ``leakage.json`` (a file, or a folder holding one) into the leakage audit's
    result model, which validates every candidate in ``provenance.classes`` (a pattern
    with exactly one capture group), and returns them as :class:`TokenClass` objects in
    the file's order.

    Raises:
        DataError: the file is missing, malformed, or a candidate does not validate (the
            message names the file and the field).
    """
    from toolaudit.audits import load_audit, load_result

    p = Path(path)
    if p.is_dir():
        p = p / "leakage.json"
    result: Any = load_result(p, load_audit("leakage").result_model)
    classes = [_unshadowed(TokenClass.from_json(rec), p) for rec in result.provenance.classes]
    if not classes:
        logger.warning("%s: provenance proposes no token classes", p)
    return classes


def _unshadowed(cls: TokenClass, path: Path) -> TokenClass:
    """A mined candidate named like a built-in class (``pdb_id``) would silently replace it
    (and a redaction of the built-in would be reported for the candidate): it is renamed
    ``mined.NAME``, and said so."""
    if cls.name not in BUILTIN_CLASSES:
        return cls
    new = f"mined.{cls.name}"
    logger.warning("%s: candidate class %r has a built-in class's name; it is tested as %r",
                   path, cls.name, new)  # fmt: skip
    return dataclasses.replace(cls, name=new, placeholder=cls.placeholder or "")


def is_controlled(examples: Sequence[Example]) -> bool:
    """Whether the rows look like the controlled tcr-shortcut benchmark."""
    return bool(examples) and all(
        tuple(t.name for t in ex.tools) == TCR_TOOLS for ex in examples[: min(20, len(examples))]
    )


def default_classes(examples: Sequence[Example]) -> list[TokenClass]:
    """The default variants: ``pdb_id``, ``peptide`` and ``format`` on the controlled
    benchmark; elsewhere every built-in detector class plus ``format`` (classes that find
    nothing are still reported, with zero replacements)."""
    if is_controlled(examples):
        return [_PDB_ID, _PEPTIDE, _FORMAT]
    return [c for name, c in BUILTIN_CLASSES.items() if name != "peptide"]

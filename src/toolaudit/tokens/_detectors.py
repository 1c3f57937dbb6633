"""Built-in detectors: compiled regular expressions with exactly one capture group.

Every detector is a named pattern whose first group is the token to redact. Patterns are
deliberately conservative (a false positive redacts task text and muddies the
counterfactual): each one demands the shape that makes the token an identifier rather than
an ordinary word or number. The ``FORMAT_PATTERNS`` describe trace scaffolding (step
headers, banners, section headers, XML tags, field names) for the format class.
"""

from __future__ import annotations

import re

# A token edge: not preceded / followed by a letter or digit. ``\b`` is wrong here because
# it treats ``_`` as a word character, and identifiers sit next to underscores in file
# names such as ``ThermoMPNN_inference_21009.csv``.
L = r"(?<![A-Za-z0-9])"
R = r"(?![A-Za-z0-9])"

_MONTHS = r"(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec)[a-z]*\.?"

DETECTOR_PATTERNS: dict[str, str] = {
    # Classic 4-character PDB ids (digit 1-9 then three alphanumerics, at least one
    # letter so plain numbers do not match) and the extended ``pdb_0000xxxx`` form.
    "pdb_id": rf"{L}([1-9](?=[A-Za-z0-9]{{0,2}}[A-Za-z])[A-Za-z0-9]{{3}}|pdb_\d{{4}}[A-Za-z0-9]{{4}}){R}",
    # UniProt's own accession grammar (6 or 10 characters), optional isoform suffix.
    "uniprot": rf"{L}([OPQ][0-9][A-Z0-9]{{3}}[0-9]|[A-NR-Z][0-9](?:[A-Z][A-Z0-9]{{2}}[0-9]){{1,2}})(?:-\d+)?{R}",
    "uuid": rf"{L}([0-9a-fA-F]{{8}}-[0-9a-fA-F]{{4}}-[0-9a-fA-F]{{4}}-[0-9a-fA-F]{{4}}-[0-9a-fA-F]{{12}}){R}",
    # 16+ hex characters containing both a digit and a letter (commit and content hashes).
    "hex_digest": rf"{L}((?=[0-9a-fA-F]*[0-9])(?=[0-9a-fA-F]*[a-fA-F])[0-9a-fA-F]{{16,}}){R}",
    # Paths with a root (/, ./, ../, .../, ~/, C:\) or a bare file name with a known
    # extension. Ratios such as ``7/4/1`` have no root and no extension, so do not match.
    "file_path": (
        r"((?<![\w./\\])(?:~|\.{1,3})?/(?:[\w.+-]+/)*[\w.+-]*[A-Za-z][\w.+-]*"
        r"|(?<![\w\\])[A-Za-z]:\\(?:[\w.+ -]+\\)*[\w.+-]+"
        r"|(?<![\w./-])[\w+-]*[A-Za-z][\w.+-]*\.(?:csv|tsv|json|jsonl|txt|log|pdb|cif|mmcif"
        r"|fasta|fa|faa|py|yaml|yml|xml|html|md|gz|zip|tar|npz|npy|pt|bin|safetensors|gguf"
        r"|parquet|sdf|mol2))(?![\w/])"
    ),
    # Dotted versions with at least three parts, or a ``v`` prefix, or after "version".
    "version": (
        rf"{L}(v\d+(?:\.\d+)+(?:[-+][0-9A-Za-z.]+)?|\d+\.\d+\.\d+(?:[-+.][0-9A-Za-z]+)*){R}"
        r"|(?i:version)[ \t]*[:=]?[ \t]*(?-i:(\d+(?:\.\d+)+))"
    ),
    "date": (
        r"((?<![\d.])\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?"
        r"(?![\d.])"
        r"|(?<![\d/])\d{1,2}/\d{1,2}/\d{4}(?![\d/])"
        rf"|{L}\d{{1,2}} {_MONTHS} \d{{4}}{R}"
        rf"|{L}{_MONTHS} \d{{1,2}}, \d{{4}}{R}"
        r"|(?<![\d:])\d{2}:\d{2}:\d{2}(?:\.\d+)?(?![\d:]))"
    ),
    # 6+ digits that are not part of a decimal number.
    "numeric_id": r"(?<![A-Za-z0-9.])(\d{6,})(?![A-Za-z0-9]|\.\d)",
    "email": r"(?<![\w.+-])([\w.+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,})(?![\w-])",
    # Credential-like secrets: well-known key prefixes, bearer tokens, JWTs, and values
    # assigned to key/secret/token/password names.
    "secret": (
        r"((?<![\w-])(?:sk-[A-Za-z0-9_-]{16,}|ghp_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,}"
        r"|AKIA[0-9A-Z]{16}|xox[abprs]-[A-Za-z0-9-]{10,}|hf_[A-Za-z0-9]{30,}"
        r"|eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}))"
        r"|(?i:bearer)[ \t]+([A-Za-z0-9._~+/-]{16,}=*)"
        r"|(?i:api[_-]?key|secret|token|password|passwd)[\"']?[ \t]*[:=][ \t]*[\"']?([^\s\"',;]{8,})"
    ),
}

# Trace scaffolding for the format class. Each pattern's groups are the spans replaced.
FORMAT_PATTERNS: dict[str, str] = {
    "step_header": (
        r"(?im)^[ \t]*((?:#+[ \t]*)?\[?(?:step|tool(?:[ _]result)?|call)[ \t#_-]*\d+\]?"
        r"(?:[ \t]*\([\w .-]*\))?[ \t]*[:.-]?)"
    ),
    "trace_banner": (
        r"(?m)^[ \t]*([=*#~-]{3,}(?:[^\n]*?[=*#~-]{3,})?)[ \t]*$"
        r"|^[ \t]*(\[(?i:trace|log|debug|info|tool|step)\][^\n]*?)[ \t]*$"
    ),
    "section_header": r"(?m)^[ \t]*(#{1,6}[ \t]+[^\n]*[^\s]|\[[A-Za-z][^\]\n]{0,60}\])[ \t]*$",
    "xml_tag": r"(</?[A-Za-z][\w:.-]*(?:[ \t]+[^<>\n]*?)?/?>)",
    "field_name": (
        r"(?m)^[ \t]*(?:[-*][ \t]+)?([^\W\d][\w.-]*(?: [\w.*-]+){0,2})[ \t]*:(?=[ \t]|$)"
        r"|(?<=[;,] )([A-Za-z_][\w.-]*)[ \t]*:(?=[ \t])"
        r"|\"([A-Za-z_][\w.-]*)\"(?=[ \t]*:)"
        r"|(?<![\w=.-])([A-Za-z_][\w.-]*)=(?=[^\s=])"
    ),
}


def _compile_all(patterns: dict[str, str]) -> dict[str, re.Pattern[str]]:
    return {name: re.compile(p) for name, p in patterns.items()}


DETECTORS: dict[str, re.Pattern[str]] = _compile_all(DETECTOR_PATTERNS)
FORMATS: dict[str, re.Pattern[str]] = _compile_all(FORMAT_PATTERNS)


def group_spans(pattern: re.Pattern[str], text: str) -> list[tuple[int, int]]:
    """Spans of the participating capture groups of every match (alternatives may use
    different groups; exactly one participates per match)."""
    spans: list[tuple[int, int]] = []
    for m in pattern.finditer(text):
        for g in range(1, (pattern.groups or 0) + 1):
            start, end = m.span(g)
            if start >= 0 and end > start:
                spans.append((start, end))
    return spans


def detect(name: str, text: str) -> list[str]:
    """Tokens found in ``text`` by the built-in detector ``name``.

    >>> detect("uuid", "run 123e4567-e89b-12d3-a456-426614174000 ok")
    ['123e4567-e89b-12d3-a456-426614174000']
    """
    pattern = DETECTORS.get(name) or FORMATS[name]
    return [text[s:e] for s, e in group_spans(pattern, text)]

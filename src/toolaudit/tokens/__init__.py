"""Token classes and the detectors behind them: the one type the leakage audit emits
(candidate classes in ``leakage.json``) and the redaction audit applies.

Example:
    >>> from toolaudit.tokens import TokenClass, detect
    >>> TokenClass("pdb", "pdb:([0-9][A-Z0-9]{3})").placeholder
    '<PDB>'
    >>> detect("pdb_id", "entry 2X7Q and 1ABC")
    ['2X7Q', '1ABC']
"""

from toolaudit.tokens._classes import (
    DetectorSource,
    FieldSource,
    Mode,
    RecordSource,
    RegexSource,
    Source,
    TextSource,
    TokenClass,
    TokenClassRecord,
    make_class,
    placeholder_for,
    record_values,
    text_matches,
    values_in_text,
)
from toolaudit.tokens._detectors import (
    DETECTOR_PATTERNS,
    DETECTORS,
    FORMAT_PATTERNS,
    FORMATS,
    L,
    R,
    detect,
)

__all__ = [
    "DETECTORS",
    "DETECTOR_PATTERNS",
    "FORMATS",
    "FORMAT_PATTERNS",
    "DetectorSource",
    "FieldSource",
    "L",
    "Mode",
    "R",
    "RecordSource",
    "RegexSource",
    "Source",
    "TextSource",
    "TokenClass",
    "TokenClassRecord",
    "detect",
    "make_class",
    "placeholder_for",
    "record_values",
    "text_matches",
    "values_in_text",
]

"""Token-class redaction with frozen-model re-evaluation (seed: leakage-audit-pt2d-redaction,
Stage 2, "Token-Class Redaction", Appendix D).

Redact one token class at a time from every prompt-bearing field, prove that nothing
survives, re-score the same frozen model on the same rows, and report the AUROC lost
(ΔA) with a paired bootstrap interval and a permutation p-value.

Example:
    >>> from toolaudit.redaction import BUILTIN_CLASSES, redact_examples
    >>> sorted(BUILTIN_CLASSES)[:3]
    ['date', 'email', 'file_path']
"""

from toolaudit.redaction._apply import (
    RedactionOutcome,
    RedactionResidualError,
    Residual,
    RowRedaction,
    check_residuals,
    collect_values,
    redact_example,
    redact_examples,
    redact_row,
)
from toolaudit.redaction._audit import (
    RedactionResult,
    VariantResult,
    run_redaction,
    select_rows,
)
from toolaudit.redaction._contract import REDACTION_AUDIT, RedactionConfig, RedactionResults
from toolaudit.redaction._registry import (
    BUILTIN_CLASSES,
    classes_from_leakage,
    default_classes,
    parse_class_specs,
)
from toolaudit.redaction._report import (
    finding_sentence,
    report_sections,
    result_payload,
    variant_findings,
)
from toolaudit.redaction._scoring import (
    INVALID_SCORE,
    SCORINGS,
    RowScores,
    parse_answer,
    score_rows,
)
from toolaudit.redaction._study import RedactionStudyConfig, run_study
from toolaudit.redaction._trim import trim_examples
from toolaudit.tokens import (
    DETECTOR_PATTERNS,
    FORMAT_PATTERNS,
    DetectorSource,
    FieldSource,
    RecordSource,
    RegexSource,
    TokenClass,
    detect,
    make_class,
    placeholder_for,
)

__all__ = [
    "RedactionConfig",
    "RedactionStudyConfig",
    "run_study",
    "REDACTION_AUDIT",
    "RedactionResults",
    "BUILTIN_CLASSES",
    "DETECTOR_PATTERNS",
    "FORMAT_PATTERNS",
    "INVALID_SCORE",
    "SCORINGS",
    "DetectorSource",
    "FieldSource",
    "RecordSource",
    "RedactionOutcome",
    "RedactionResidualError",
    "Residual",
    "RowRedaction",
    "RedactionResult",
    "RegexSource",
    "RowScores",
    "TokenClass",
    "VariantResult",
    "check_residuals",
    "classes_from_leakage",
    "collect_values",
    "default_classes",
    "finding_sentence",
    "detect",
    "make_class",
    "parse_answer",
    "parse_class_specs",
    "placeholder_for",
    "redact_example",
    "redact_row",
    "redact_examples",
    "report_sections",
    "result_payload",
    "run_redaction",
    "score_rows",
    "select_rows",
    "trim_examples",
    "variant_findings",
]

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
    LOCATIONS,
    RedactionOutcome,
    RedactionResidualError,
    Residual,
    RowRedaction,
    check_residuals,
    collect_values,
    find_residuals,
    redact_example,
    redact_examples,
    redact_row,
    redact_text,
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
    is_controlled,
    parse_class_specs,
)
from toolaudit.redaction._report import (
    class_json,
    finding_sentence,
    report_sections,
    result_payload,
    variant_findings,
    write_scores,
)
from toolaudit.redaction._scoring import (
    INVALID_SCORE,
    SCORINGS,
    RowScores,
    model_input,
    parse_answer,
    score_rows,
)
from toolaudit.redaction._study import RedactionStudyConfig, examples_path, run_study
from toolaudit.redaction._trim import trim_example, trim_examples
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
    "examples_path",
    "run_study",
    "class_json",
    "REDACTION_AUDIT",
    "RedactionResults",
    "BUILTIN_CLASSES",
    "DETECTOR_PATTERNS",
    "FORMAT_PATTERNS",
    "INVALID_SCORE",
    "LOCATIONS",
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
    "find_residuals",
    "finding_sentence",
    "detect",
    "is_controlled",
    "make_class",
    "model_input",
    "parse_answer",
    "parse_class_specs",
    "placeholder_for",
    "redact_example",
    "redact_row",
    "redact_examples",
    "redact_text",
    "report_sections",
    "result_payload",
    "run_redaction",
    "score_rows",
    "select_rows",
    "trim_example",
    "trim_examples",
    "variant_findings",
    "write_scores",
]

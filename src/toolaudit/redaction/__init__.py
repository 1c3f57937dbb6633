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

from toolaudit.redaction._apply import RedactionResidualError, Residual, redact_examples
from toolaudit.redaction._audit import RedactionResult
from toolaudit.redaction._contract import REDACTION_AUDIT, RedactionConfig, RedactionResults
from toolaudit.redaction._registry import BUILTIN_CLASSES, classes_from_leakage, select_classes
from toolaudit.redaction._report import report_sections
from toolaudit.redaction._scoring import (
    SCORINGS,
    RowScores,
    score_rows,
)
from toolaudit.redaction._seeds import redaction_seeds, seeds_markdown
from toolaudit.redaction._study import RedactionStudyConfig, run_study
from toolaudit.redaction._train_lm import LMTrainConfig, train_controlled_lm
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
    "redaction_seeds",
    "seeds_markdown",
    "BUILTIN_CLASSES",
    "LMTrainConfig",
    "train_controlled_lm",
    "redact_examples",
    "RedactionConfig",
    "RedactionStudyConfig",
    "run_study",
    "REDACTION_AUDIT",
    "RedactionResults",
    "DETECTOR_PATTERNS",
    "FORMAT_PATTERNS",
    "SCORINGS",
    "DetectorSource",
    "FieldSource",
    "RecordSource",
    "RedactionResidualError",
    "Residual",
    "RedactionResult",
    "RegexSource",
    "RowScores",
    "TokenClass",
    "classes_from_leakage",
    "detect",
    "make_class",
    "placeholder_for",
    "report_sections",
    "score_rows",
    "select_classes",
]

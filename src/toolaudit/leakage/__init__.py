"""Leakage audit (PT2D): per-tool TF-IDF decomposition, provenance, prefix lookup and
dilution sweeps, on an exact, fast re-implementation of scikit-learn's TfidfVectorizer.

Spec: ``seeds/leakage-audit-pt2d-redaction.txt`` (method, Appendices C and E).
"""

from toolaudit.leakage._audit import LeakageResult, run_leakage
from toolaudit.leakage._cluster import require_distributed
from toolaudit.leakage._config import (
    DilutionConfig,
    LeakageConfig,
)
from toolaudit.leakage._contract import (
    LEAKAGE_AUDIT,
    LEAKAGE_REAL_AUDIT,
    LeakageAuditConfig,
    LeakageResults,
)
from toolaudit.leakage._engine import PT2DEngine
from toolaudit.leakage._features import FEATURE_SETS, FeatureSpec, LRSpec, feature_specs
from toolaudit.leakage._memory import return_freed_memory
from toolaudit.leakage._partition import (
    Partition,
    Selection,
)
from toolaudit.leakage._provenance import TokenClass
from toolaudit.leakage._report import leakage_sections
from toolaudit.leakage._verdict import VERDICT_KINDS
from toolaudit.leakage._wording import below_chance_note
from toolaudit.leakage._words import WordCorpus

__all__ = [
    "LeakageAuditConfig",
    "LeakageResults",
    "return_freed_memory",
    "VERDICT_KINDS",
    "require_distributed",
    "feature_specs",
    "LEAKAGE_AUDIT",
    "LEAKAGE_REAL_AUDIT",
    "FEATURE_SETS",
    "DilutionConfig",
    "FeatureSpec",
    "LRSpec",
    "LeakageConfig",
    "LeakageResult",
    "PT2DEngine",
    "Partition",
    "WordCorpus",
    "Selection",
    "TokenClass",
    "below_chance_note",
    "leakage_sections",
    "run_leakage",
]

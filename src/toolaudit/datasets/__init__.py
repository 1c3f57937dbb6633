"""Seeded generators of controlled benchmarks.

``tcr-shortcut`` mirrors the TCR-pMHC data of ``seeds/leakage-audit-pt2d-redaction.txt``
with one planted, known shortcut (the "PDB id" prefix); see ``make_tcr_shortcut``.
"""

from toolaudit.datasets._contract import DATASETS_AUDIT, DatasetsConfig, strength_fallback
from toolaudit.datasets._identifiers import (
    SEED_CLUSTER_STRENGTH,
    STRENGTH,
    parse_cluster_strength,
    prefix_auroc,
    validate_strength,
)
from toolaudit.datasets._plan import validate_scale
from toolaudit.datasets._seed_figures import (
    SEED_FIGURES,
    looks_like_tcr_redaction,
    looks_like_tcr_scopes,
)
from toolaudit.datasets._tcr_shortcut import (
    DATASET_NAME,
    SMALL_SCALE,
    SMALL_STRENGTH,
    DatasetManifest,
    make_tcr_shortcut,
    write_tcr_shortcut,
)
from toolaudit.datasets._tcr_tools import TCR_FORMAT_PATTERNS, TCR_TOOLS

__all__ = [
    "SEED_CLUSTER_STRENGTH",
    "parse_cluster_strength",
    "DATASETS_AUDIT",
    "DATASETS",
    "DATASET_NAME",
    "SEED_FIGURES",
    "SMALL_SCALE",
    "SMALL_STRENGTH",
    "STRENGTH",
    "TCR_FORMAT_PATTERNS",
    "TCR_TOOLS",
    "DatasetManifest",
    "DatasetsConfig",
    "looks_like_tcr_redaction",
    "looks_like_tcr_scopes",
    "make_tcr_shortcut",
    "prefix_auroc",
    "strength_fallback",
    "validate_scale",
    "validate_strength",
    "write_tcr_shortcut",
]

# Generator name -> one-line description (what ``toolaudit datasets list`` shows).
DATASETS: dict[str, str] = {
    DATASET_NAME: "TCR-pMHC binding with five tool sections and a planted PDB-id shortcut "
    "(seed: leakage-audit-pt2d-redaction, Table 2 counts at scale 1)",
}

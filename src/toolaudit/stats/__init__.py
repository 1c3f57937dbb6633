"""Statistics shared by every audit: AUROC, bootstrap intervals, paired tests."""

from toolaudit.stats._auroc import (
    GroupNull,
    Interval,
    auroc,
    bootstrap_auroc,
    group_permutation_auroc,
    paired_bootstrap_auroc_delta,
    paired_permutation_auroc,
)
from toolaudit.stats._paired import cluster_mean_bootstrap, cluster_mean_replicates
from toolaudit.stats._tests import (
    Equivalence,
    bonferroni,
    cluster_bootstrap,
    cohen_kappa,
    equivalence_verdict,
    holm,
    holm_reject,
    mcnemar_exact,
    sign_test,
)

__all__ = [
    "Equivalence",
    "GroupNull",
    "Interval",
    "auroc",
    "bonferroni",
    "bootstrap_auroc",
    "cluster_bootstrap",
    "cluster_mean_bootstrap",
    "cluster_mean_replicates",
    "cohen_kappa",
    "equivalence_verdict",
    "group_permutation_auroc",
    "holm",
    "holm_reject",
    "mcnemar_exact",
    "paired_bootstrap_auroc_delta",
    "paired_permutation_auroc",
    "sign_test",
]

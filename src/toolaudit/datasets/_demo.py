"""The datasets part of ``toolaudit demo``: the controlled benchmark at small scale."""

from __future__ import annotations

import logging
from pathlib import Path

from toolaudit.datasets._identifiers import prefix_auroc
from toolaudit.datasets._plan import plan_counts
from toolaudit.datasets._tcr_shortcut import DATASET_NAME, write_tcr_shortcut
from toolaudit.progress import Progress
from toolaudit.report import Section

__all__ = ["DEMO_SCALE", "counts_rows", "demo_sections"]

logger = logging.getLogger(__name__)

DEMO_SCALE = 0.05


def counts_rows(*, scale: float) -> list[list[object]]:
    """Table rows ``[group, split, total, positives, negatives, ideal 2-char prefix AUROC]``."""
    return [
        [c.group, c.split, c.total, c.positives, c.negatives, prefix_auroc(c.group, chars=2)]
        for c in plan_counts(scale=scale)
    ]


def demo_sections(
    out_dir: Path,
    *,
    data_root: Path | None = None,
    seed: int = 0,
    progress: Progress | None = None,
) -> list[Section]:
    """Generate ``tcr-shortcut`` at scale 0.05 into ``out_dir/tcr-shortcut/`` and
    describe it (counts per group and split). ``data_root`` is unused: the benchmark
    needs no external data."""
    path = write_tcr_shortcut(
        Path(out_dir) / DATASET_NAME, scale=DEMO_SCALE, seed=seed, progress=progress
    )
    rows = counts_rows(scale=DEMO_SCALE)
    total = sum(int(r[2]) for r in rows)  # type: ignore[call-overload]
    positives = sum(int(r[3]) for r in rows)  # type: ignore[call-overload]
    section = Section("Controlled benchmark: tcr-shortcut")
    section.text(
        f"Generated {total} examples ({positives} positive) at scale {DEMO_SCALE} with "
        f"seed {seed} into `{path}`. Cluster C0 supplies train and validation, "
        "peptide-disjoint clusters C1-C5 the test set, with the seed's Table 2 counts "
        "scaled. Every example carries five tool sections (cdr3b_biophysics, "
        "mcpas_retrieval, thermompnn_ddg, stability_summary, interface_analysis) drawn "
        "independently of the label, except one planted shortcut: a PDB id whose "
        "deposition-batch prefix correlates with the label, written in thermompnn_ddg as "
        "`ThermoMPNN_inference_<id>.csv` and in interface_analysis as `complex_id: <id>`."
    )
    section.table(
        "Examples per cluster and split (last column: the best AUROC any two-character "
        "prefix lookup can reach in that cluster, from the generating distribution)",
        ["group", "split", "total", "positives", "negatives", "ideal prefix AUROC"],
        rows,
    )
    return [section]

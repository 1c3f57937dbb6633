"""The controlled benchmark as an :class:`~toolaudit.audits.Audit`: generate
``tcr-shortcut`` at a small scale and record what was generated in ``datasets.json``."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, ClassVar

from toolaudit.audits import AuditResult, ProgressFn, result_meta
from toolaudit.datasets._identifiers import STRENGTH, prefix_auroc, validate_strength
from toolaudit.datasets._plan import validate_scale
from toolaudit.datasets._tcr_shortcut import DATASET_NAME, write_tcr_shortcut
from toolaudit.errors import check_choice, check_min
from toolaudit.report import Fallback, Section

#: The demo's benchmark scale.
DEMO_SCALE = 0.05


@dataclass(frozen=True, slots=True)
class DatasetsConfig:
    """Which controlled benchmark to generate, at what scale, with which seed and
    shortcut strength (a strength other than the seed-calibrated default is recorded as
    a ``relaxed_parameter`` fallback)."""

    dataset: str = DATASET_NAME
    scale: float = DEMO_SCALE
    seed: int = 0
    strength: float = STRENGTH

    def __post_init__(self) -> None:
        check_choice("dataset", self.dataset, (DATASET_NAME,))
        validate_scale(self.scale)
        check_min("seed", self.seed, 0)
        validate_strength(self.strength)


def strength_fallback(strength: float) -> Fallback | None:
    """The ``relaxed_parameter`` fallback for a non-default shortcut strength, or None."""
    if strength == STRENGTH:
        return None
    return Fallback(
        kind="relaxed_parameter",
        what="tcr-shortcut.strength",
        detail=f"planted shortcut strength {strength:g} instead of the seed-calibrated "
        f"{STRENGTH:g}, so the finding is visible at this small scale",
    )


class DatasetsResult(AuditResult):
    """``datasets.json``: the generated benchmark's manifest (counts per cell, sha256),
    its path relative to the output folder, and the ideal 2-character prefix AUROC of
    each cluster (from the generating distribution)."""

    results_file: ClassVar[str] = "datasets.json"

    dataset: dict[str, Any]
    path: str
    ideal_prefix_auroc: dict[str, float]


class DatasetsAudit:
    """Generation of the controlled benchmark (the demo's second part)."""

    name = "datasets"
    title = "Controlled benchmark: tcr-shortcut"
    result_model = DatasetsResult

    def demo_config(self, *, seed: int, data_root: Path | None) -> DatasetsConfig:
        """tcr-shortcut in its small configuration (``SMALL_SCALE``, ``SMALL_STRENGTH``:
        the planted finding is visible there; the strength is recorded as a fallback), which
        the leakage part then audits; ``data_root`` is unused (nothing is read)."""
        from toolaudit.datasets._tcr_shortcut import SMALL_SCALE, SMALL_STRENGTH

        return DatasetsConfig(seed=seed, scale=SMALL_SCALE, strength=SMALL_STRENGTH)

    def run(
        self, config: DatasetsConfig, *, out_dir: Path, progress: ProgressFn | None = None
    ) -> DatasetsResult:
        """Write ``out_dir/tcr-shortcut/examples.jsonl`` and ``dataset.json``."""
        folder = Path(out_dir) / config.dataset
        path = write_tcr_shortcut(
            folder,
            scale=config.scale,
            seed=config.seed,
            strength=config.strength,
            progress=progress,
        )
        manifest = json.loads((folder / "dataset.json").read_text(encoding="utf-8"))
        groups = list(dict.fromkeys(str(c["group"]) for c in manifest["cells"]))
        relaxed = strength_fallback(config.strength)
        meta = result_meta(
            command="toolaudit datasets make",
            seed=config.seed,
            config=asdict(config),
            fallbacks=[relaxed] if relaxed else None,
        )
        return DatasetsResult(
            schema_version=meta.schema_version,
            meta=meta,
            dataset=manifest,
            path=str(path.relative_to(out_dir)),
            ideal_prefix_auroc={
                g: prefix_auroc(g, chars=2, strength=config.strength) for g in groups
            },
        )

    def sections(self, result: DatasetsResult) -> list[Section]:
        """Counts per cluster and split, taken from the manifest."""
        ds = result.dataset
        tools = ", ".join(ds["tools"])
        section = Section(self.title)
        section.text(
            f"Generated {ds['examples']} examples ({ds['positives']} positive) at scale "
            f"{ds['scale']} with seed {ds['seed']} into `{result.path}`. Cluster C0 supplies "
            "train and validation, peptide-disjoint clusters C1-C5 the test set, with the "
            f"seed's Table 2 counts scaled. Every example carries {len(ds['tools'])} tool "
            f"sections ({tools}) drawn independently of the label, except one planted "
            "shortcut: a PDB id whose deposition-batch prefix correlates with the label, "
            "written in thermompnn_ddg as `ThermoMPNN_inference_<id>.csv` and in "
            "interface_analysis as `complex_id: <id>`."
        )
        section.table(
            "Examples per cluster and split (last column: the best AUROC any two-character "
            "prefix lookup can reach in that cluster, from the generating distribution)",
            ["group", "split", "total", "positives", "negatives", "ideal prefix AUROC"],
            [
                [c["group"], c["split"], c["total"], c["positives"], c["negatives"],
                 result.ideal_prefix_auroc.get(str(c["group"]))]
                for c in ds["cells"]
            ],
        )  # fmt: skip
        return [section]


DATASETS_AUDIT = DatasetsAudit()

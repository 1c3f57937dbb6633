"""The demo hook: the redaction audit on the controlled benchmark at small scale with the
controlled frozen model (trained on cluster C0 of the same demo data)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path

from toolaudit.report import Section, run_metadata

logger = logging.getLogger(__name__)

DEMO_SCALE = 0.05


def controlled_model_identity(pipeline: object, *, scale: float, seed: int) -> str:
    """The cache identity of the controlled model trained on the demo data: the data's
    scale and seed plus a digest of the fitted pipeline, so a changed trainer never reads
    another model's cached answers."""
    import hashlib
    import pickle

    digest = hashlib.sha256(pickle.dumps(pipeline, protocol=4)).hexdigest()[:16]
    return f"sklearn:controlled-tcr-shortcut@scale={scale},seed={seed},sha256={digest}"


def demo_sections(
    out_dir: Path,
    *,
    data_root: Path | None,
    seed: int,
    progress: Callable[[int, int, str], None],
    scale: float = DEMO_SCALE,
) -> list[Section]:
    """Run the redaction audit on the controlled benchmark (``scale``) with the controlled
    frozen model, write ``out_dir/redaction.json`` and return the report sections.

    ``data_root`` is unused: the controlled benchmark is generated, not read.
    """
    from toolaudit.datasets import make_tcr_shortcut
    from toolaudit.models import CachedModel, SklearnModel, train_controlled_model
    from toolaudit.redaction._audit import run_redaction, select_rows
    from toolaudit.redaction._registry import default_classes
    from toolaudit.redaction._report import report_sections, write_outputs

    examples = make_tcr_shortcut(scale=scale, seed=seed)
    progress(0, 1, "training the controlled frozen model on C0")
    pipe = train_controlled_model(examples, seed=seed)
    identity = controlled_model_identity(pipe, scale=scale, seed=seed)
    model = CachedModel(
        SklearnModel.from_pipeline(pipe, identity=identity), out_dir / "redaction_cache.sqlite"
    )
    rows = select_rows(examples, eval_filter={"split": ["test"]})
    classes = default_classes(examples)
    result = run_redaction(
        rows, model, classes=classes, scoring="options", seed=seed, progress=progress
    )
    meta = run_metadata(
        command="toolaudit demo (redaction)",
        seed=seed,
        config={"dataset": "tcr-shortcut", "scale": scale, "model": identity, "scoring": "options",
                "eval": "split=test", "classes": [c.name for c in classes]},
    )  # fmt: skip
    write_outputs(out_dir, result, classes, meta, scores_name="redaction_scores.jsonl")
    sections = report_sections(result, title="Redaction audit (controlled benchmark)")
    sections[0].blocks.insert(
        0,
        f"Controlled tcr-shortcut benchmark at scale {scale} (seed {seed}); the frozen model "
        f"is a character n-gram logistic regression trained on C0/train of the same data, "
        f"evaluated on the {len(rows)} test rows of C1..C5. The planted shortcut is the PDB id "
        f"prefix, so pdb_id redaction should remove the above-chance ranking while the "
        f"peptide control leaves it unchanged.",
    )
    return sections

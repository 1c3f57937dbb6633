"""The demo hook: the redaction audit on the controlled benchmark at small scale with the
controlled frozen model (trained on cluster C0 of the same demo data), through the audit
contract (:data:`~toolaudit.redaction.REDACTION_AUDIT`)."""

from __future__ import annotations

from pathlib import Path

from toolaudit.progress import Progress
from toolaudit.redaction._contract import (
    DEMO_SCALE,
    REDACTION_AUDIT,
    RedactionConfig,
    controlled_model_identity,
)
from toolaudit.report import Section

__all__ = ["DEMO_SCALE", "controlled_model_identity", "demo_sections"]


def demo_sections(
    out_dir: Path,
    *,
    data_root: Path | None,
    seed: int,
    progress: Progress,
    scale: float = DEMO_SCALE,
) -> list[Section]:
    """Run the redaction audit on the controlled benchmark (``scale``) with the controlled
    frozen model, write ``out_dir/redaction.json`` and return the report sections.

    ``data_root`` is unused: the controlled benchmark is generated, not read.
    """
    result = REDACTION_AUDIT.run(
        RedactionConfig(scale=scale, seed=seed), out_dir=Path(out_dir), progress=progress
    )
    return REDACTION_AUDIT.sections(result)

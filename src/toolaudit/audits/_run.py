"""Running registered audits: one audit into a folder, and every results file of a folder
loaded back into its model."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from toolaudit.audits._contract import AuditResult, ProgressFn
from toolaudit.audits._io import load_result, write_result
from toolaudit.audits._registry import AUDITS, load_audit


def run_audit(
    name: str,
    out_dir: Path,
    *,
    config: Any = None,
    seed: int = 0,
    data_root: Path | None = None,
    progress: ProgressFn | None = None,
    results_file: str | None = None,
) -> AuditResult:
    """Run the registered audit ``name`` (its demo configuration unless ``config`` is
    given) into ``out_dir`` and write its results file (``results_file`` under
    ``out_dir``: the result model's own unless given); returns the result."""
    audit = load_audit(name)
    cfg = config if config is not None else audit.demo_config(seed=seed, data_root=data_root)
    result: AuditResult = audit.run(cfg, out_dir=Path(out_dir), progress=progress)
    write_result(result, out_dir, name=results_file)
    return result


def load_results(out_dir: Path, names: list[str] | None = None) -> dict[str, AuditResult]:
    """Every registered audit's results file found in ``out_dir``, loaded into its model
    (audits whose file is absent are left out)."""
    out: dict[str, AuditResult] = {}
    for name in names or list(AUDITS):
        model = load_audit(name).result_model
        path = Path(out_dir) / model.results_file
        if path.is_file():
            out[name] = load_result(path, model)
    return out

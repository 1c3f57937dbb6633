"""The redaction audit through its contract writes redaction.json and gives a report
section with tables and a plot."""

from __future__ import annotations

import json
from pathlib import Path

from toolaudit.audits import load_audit, run_audit
from toolaudit.redaction._contract import RedactionConfig
from toolaudit.report import Figure, Table


def test_redaction_audit_writes_results_and_report_blocks(tmp_path: Path) -> None:
    seen: list[tuple[int, int, str]] = []
    result = run_audit("redaction", tmp_path, config=RedactionConfig(scale=0.02, seed=0),
                       progress=lambda d, t, label: seen.append((d, t, label)))  # fmt: skip
    doc = json.loads((tmp_path / "redaction.json").read_text())
    assert [v["name"] for v in doc["variants"]] == ["original", "pdb_id", "peptide", "format"]
    assert doc["meta"]["config"]["scale"] == 0.02 and doc["meta"]["seed"] == 0
    assert doc["calls"] == {"requests": doc["rows"] * 4 * 10}
    (sec,) = load_audit("redaction").sections(result)
    tables = [b for b in sec.blocks if isinstance(b, Table)]
    assert tables[0].header[:3] == ["variant", "all", "ΔA"]
    assert [row[0] for row in tables[1].rows] == ["pdb_id", "peptide", "format"]
    assert sum(isinstance(b, Figure) for b in sec.blocks) == 1
    assert seen[-1][0] == seen[-1][1] == doc["rows"] * 4

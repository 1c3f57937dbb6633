"""The demo hook writes redaction.json and returns a report section with tables and a plot."""

from __future__ import annotations

import json
from pathlib import Path

from toolaudit.redaction import demo_sections
from toolaudit.report import Figure, Table


def test_demo_sections_writes_results_and_report_blocks(tmp_path: Path) -> None:
    seen: list[tuple[int, int, str]] = []
    sections = demo_sections(tmp_path, data_root=None, seed=0,
                             progress=lambda d, t, label: seen.append((d, t, label)), scale=0.02)  # fmt: skip
    doc = json.loads((tmp_path / "redaction.json").read_text())
    assert [v["name"] for v in doc["variants"]] == ["original", "pdb_id", "peptide", "format"]
    assert doc["meta"]["config"]["scale"] == 0.02 and doc["meta"]["seed"] == 0
    assert doc["calls"] == {"requests": doc["rows"] * 4 * 10}
    (sec,) = sections
    tables = [b for b in sec.blocks if isinstance(b, Table)]
    assert tables[0].header[:3] == ["variant", "all", "ΔA"]
    assert [row[0] for row in tables[1].rows] == ["pdb_id", "peptide", "format"]
    assert sum(isinstance(b, Figure) for b in sec.blocks) == 1
    assert seen[-1][0] == seen[-1][1] == doc["rows"] * 4

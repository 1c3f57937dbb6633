"""The probe report's evidence: one original-vs-mutated transcript pair per condition."""

from __future__ import annotations

import json
from pathlib import Path

from toolaudit.cli.main import main
from toolaudit.probes._mutations import MUTATED


def test_each_condition_gets_a_pair_whose_actions_changed_when_one_did(tmp_path: Path) -> None:
    out = tmp_path / "study"
    assert main(["-q", "probe", "run", "--out", str(out), "--tasks", "2", "--seeds", "1",
                 "--report", "--json"]) == 0  # fmt: skip
    doc = json.loads((out / "probe.json").read_text())
    pairs = doc["transcripts"]
    assert [p["condition"] for p in pairs] == list(MUTATED)
    for p in pairs:
        assert p["why"] in ("actions changed", "pass changed", "first pair")
        assert p["original"] and p["mutated"] and p["original"][0][0] == "user"
        if p["why"] == "actions changed":
            calls = [
                [t for r, t in p[side] if r == "assistant"] for side in ("original", "mutated")
            ]
            assert calls[0] != calls[1]
    # the renamed tool shows up marked in the tool_rename pair
    page = (out / "report.html").read_text(encoding="utf-8")
    assert page.count("<details><summary>tool_rename:") == 1 and "<mark>" in page

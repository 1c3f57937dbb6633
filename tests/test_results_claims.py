"""results/README.md says what each committed study is; its claims are read here against
the study's own files (issue 55): every folder it lists exists with its command, every
model spec its engine column names is in the study's recorded options, and a study it
calls complete holds the number of runs or calls its size column gives."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

RESULTS = Path(__file__).resolve().parents[1] / "results"
SPEC = re.compile(r"`((?:embedded|llama|hf|openai|py|sklearn):[A-Za-z0-9_.\-/]+)")
SIZE = re.compile(r"^([\d,]+) (runs|calls)$")


def _rows() -> list[tuple[str, str, str, str]]:
    """(folder, engine, size, status) of every study row of the table."""
    rows = []
    for line in (RESULTS / "README.md").read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 5 and cells[0].startswith("`") and cells[0].endswith("/`"):
            rows.append((cells[0].strip("`").rstrip("/"), cells[2], cells[3], cells[4]))
    return rows


ROWS = _rows()


def test_the_table_lists_the_studies() -> None:
    assert len(ROWS) >= 15
    assert {"judge-audit", "judge-judges", "probe-tau2bench-qwen"} <= {r[0] for r in ROWS}


@pytest.mark.parametrize(("folder", "engine", "size", "status"), ROWS, ids=[r[0] for r in ROWS])
def test_each_claim_matches_the_study_files(
    folder: str, engine: str, size: str, status: str
) -> None:
    study = RESULTS / folder
    assert (study / "command.sh").is_file(), f"{folder}: no command.sh"
    config = study / "run_config.json"
    # a study of several runs (redact-lm: training, then redaction) keeps one per part
    parts = [config] if config.is_file() else sorted(study.glob("*/run_config.json"))
    recorded = "\n".join(c.read_text(encoding="utf-8") for c in parts)
    for spec in SPEC.findall(engine):
        base = spec.split(",")[0]
        assert base in recorded, f"{folder}: the README names {spec}, its run_config.json does not"
    m = SIZE.match(size)
    if m is None or not status.startswith("**complete**"):
        return
    n = int(m.group(1).replace(",", ""))
    name = "records.jsonl" if m.group(2) == "runs" else "verdicts.jsonl"
    lines = [x for x in (study / name).read_text(encoding="utf-8").splitlines() if x.strip()]
    assert len(lines) == n, f"{folder}: the README says {size}, {name} holds {len(lines)}"
    if name == "verdicts.jsonl":
        judges = {json.loads(x)["judge"] for x in lines}
        assert judges == set(json.loads(config.read_text())["judge_model"]), folder

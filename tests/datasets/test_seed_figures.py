"""The seed's published figures, as reports print them beside a run on the controlled
benchmark: each number checked against the seed's own text, and both reports' tables."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from toolaudit.audits import load_audit, load_result
from toolaudit.datasets import (
    SEED_FIGURES,
    TCR_TOOLS,
    looks_like_tcr_redaction,
    looks_like_tcr_scopes,
)
from toolaudit.leakage import leakage_sections
from toolaudit.redaction import report_sections

REPO = Path(__file__).resolve().parents[2]
SEED = REPO.parent / "shared" / "seeds" / "leakage-audit-pt2d-redaction.txt"
_TOOL_ROW = {"full": "Full trace", **{t: f"Tool {i}" for i, t in enumerate(TCR_TOOLS, 1)}}
_FEATS = ("word_1_2", "char_wb_2_5", "char_wb_3_5")


@pytest.fixture(scope="module")
def seed_lines() -> set[str]:
    if not SEED.is_file():
        pytest.fail(f"seed text not found at {SEED}")
    return {line.strip() for line in SEED.read_text(encoding="utf-8").splitlines()}


def _row(*cells: object) -> str:
    return "\t".join(f"{c:.4f}" if isinstance(c, float) else str(c) for c in cells)


def test_every_figure_is_a_line_of_the_seed(seed_lines: set[str]) -> None:
    s = SEED_FIGURES
    want = [_row(_TOOL_ROW[k], *[v[f] for f in _FEATS]) for k, v in s.scope_auroc.items()]
    want += [_row(_TOOL_ROW[k], *v) for k, v in s.scope_by_group.items()]
    want += [_row(f"{d} digit" + ("s" if d > 1 else ""), *v) for d, v in s.prefix.items()]
    want += [_row(k, *v) for k, v in s.synthetic.items()]
    order = ["3", "1", "2", "4", "5"]
    want += [
        f"{{{','.join(order[:n])}}}\t{n}\t{a:.4f}\t[{lo:.4f}, {hi:.4f}]"
        for n, (a, lo, hi) in s.real_sweep.items()
    ]
    names = {"original": "Original", "pdb_id": "PDB-ID redacted",
             "peptide": "Peptide redacted", "format": "Format redacted"}  # fmt: skip
    for key, (a, d, *groups) in s.redaction.items():
        delta = "—" if d is None else (f"+{d:.4f}" if d > 0 else f"−{-d:.4f}")
        want.append("\t".join([names[key], f"{a:.4f}", delta, *[f"{g:.4f}" for g in groups]]))
    assert [w for w in want if w not in seed_lines] == []
    text = SEED.read_text(encoding="utf-8")
    assert f"{s.no_evidence:.4f} test AUROC" in text
    for cls, label in (("pdb_id", "PDB ID"), ("peptide", "Peptide"), ("format", "Format")):
        assert f"{label}\t{s.replacements[cls]:,}\t" in text


def test_signatures() -> None:
    assert looks_like_tcr_scopes(["full", *TCR_TOOLS])
    assert not looks_like_tcr_scopes(["full", *TCR_TOOLS[:4]])
    assert not looks_like_tcr_scopes(["full", "get_order_details"])
    assert looks_like_tcr_redaction(["original", "pdb_id", "peptide"], ["C1", "C5"])
    assert not looks_like_tcr_redaction(["original", "uuid"], ["C1"])
    assert not looks_like_tcr_redaction(["original", "pdb_id"], ["task_1", "task_2"])


def _scope(scope: str, feats: str, auroc: float) -> dict[str, object]:
    groups = {g: {"auroc": auroc - 0.01} for g in ("C1", "C2", "C3", "C4", "C5")}
    return {"scope": scope, "features": feats, "auroc": auroc, "ci95": [auroc - 0.03, auroc + 0.03],
            "by_group": groups}  # fmt: skip


def _tables(sections: list) -> dict[str, list[list[object]]]:
    return {b.caption: b.rows for b in sections[0].blocks if hasattr(b, "rows")}


def test_leakage_report_prints_table_1_beside_the_seed() -> None:
    scopes = ["full", *TCR_TOOLS]
    payload = {
        "scopes": [_scope(s, f, 0.5 + 0.1 * (s == TCR_TOOLS[2])) for s in scopes for f in _FEATS],
        "data": {"examples": 19276},
        "dilution": {
            "features": "char_wb_3_5", "carrier": TCR_TOOLS[2],
            "real": [{"tools": [TCR_TOOLS[2]], "size": 1, "auroc": 0.6, "ci95": [0.57, 0.63]}],
            "synthetic": {"pool_tools": [], "pool_size": 0, "pool_mean_length": 0.0,
                          "points": [{"k": 5, "mean": 0.52, "sd": 0.01, "min": 0.5, "max": 0.53}]},
        },
    }  # fmt: skip
    tables = _tables(leakage_sections(payload))
    (t1,) = [rows for cap, rows in tables.items() if "Table 1" in cap]
    assert t1[3] == [TCR_TOOLS[2], "0.600 / 0.4946", "0.600 / 0.6288", "0.600 / 0.6365"]
    (sweep,) = [rows for cap, rows in tables.items() if "subset sweep" in cap and "seed" in cap]
    assert sweep[0][4:] == ["0.6365", "[0.6008, 0.6704]"]
    (syn,) = [rows for cap, rows in tables.items() if "synthetic" in cap and "seed" in cap]
    assert syn == [[5, "0.520 (0.010)", "0.5064 (0.0259)"]]
    # any other data: no seed tables
    payload["scopes"] = [_scope(s, f, 0.5) for s in ("full", "get_order_details") for f in _FEATS]
    assert not [c for c in _tables(leakage_sections(payload)) if "seed" in c.lower()]


def test_redaction_report_prints_table_8_beside_the_seed() -> None:
    path = REPO / "results" / "redact-lm" / "redaction" / "redaction.json"
    result = load_result(path, load_audit("redaction").result_model)
    tables = _tables(report_sections(result))
    (t8,) = [rows for cap, rows in tables.items() if cap.startswith("Table 8 beside")]
    assert t8[1][:3] == ["pdb_id", "0.500 / 0.4972", "+0.500 / +0.3163"]
    assert t8[1][-1] == "1,225 / 50,778"
    assert t8[2][2] == "+0.000 / -0.0017"
    assert json.loads(path.read_text())["rows"] == 245

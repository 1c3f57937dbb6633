"""The embedded Gemma 3 270M, zero-shot, through the same redaction audit (real model).

The default test uses a handful of short rows (a full controlled-benchmark prompt is about
4,800 tokens, minutes per row on 2 cores); the slow test runs a trimmed subset of the
controlled benchmark.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest

from toolaudit.models import CachedModel
from toolaudit.models._hf import HFModel
from toolaudit.redaction._audit import run_redaction, select_rows
from toolaudit.redaction._registry import BUILTIN_CLASSES
from toolaudit.redaction._trim import trim_examples
from toolaudit.traces import ChatMessage, Example

TASK = "Does the TCR bind? Answer 1 (no) to 10 (yes) in <answer></answer>."
ROWS = [("2X7Q", "KLVALGINAV", 1), ("6L9D", "GILGFVFTL", 0), ("5N6F", "NLVPMVATV", 1),
        ("1QB3", "YLQPRTFVL", 0)]  # fmt: skip


def _rows() -> list[Example]:
    out = []
    for pdb, pep, label in ROWS:
        prompt = (f"{TASK}\nPeptide: {pep}\nthermompnn_csv_path: ThermoMPNN_inference_{pdb}.csv\n"
                  f"complex_id: {pdb}\npeptide: {pep}")  # fmt: skip
        out.append(Example(
            id=pdb, label=label, group="C1", split="test", fields={"peptide": pep},
            prompt=prompt, messages=[ChatMessage(role="user", content=prompt)],
            meta={"pdb_id": pdb, "extra_info": {"question": prompt}},
        ))  # fmt: skip
    return out


def _model(embedded_lm: tuple[Any, Any], cache: Path) -> CachedModel:
    model, tok = embedded_lm
    hf = HFModel.from_loaded(model, tok, identity="embedded:test-fixture", batch_size=10)
    return CachedModel(hf, cache)


@pytest.mark.model
def test_gemma_zero_shot_redaction_end_to_end_and_cached_rerun(
    embedded_lm: tuple[Any, Any], tmp_path: Path
) -> None:
    classes = [BUILTIN_CLASSES["pdb_id"]]  # the peptide control is covered in test_audit
    lm = _model(embedded_lm, tmp_path / "cache.sqlite")
    res = run_redaction(_rows(), lm, classes=classes, scoring="options", n_boot=200)
    assert res.calls == {"made": 4 * 2 * 10, "cached": 0}
    for v in res.variants:
        assert v.valid_rate == 1.0 and v.residuals == 0
        assert all(0.0 <= s <= 1.0 for s in v.scores)
        assert 0.0 < v.option_mass <= 1.0  # the model's own mass on "k</answer>"
        assert not math.isnan(v.auroc)
    pdb = res.variant("pdb_id")
    # per row: file name + complex_id in prompt and message, meta pdb_id + 2 in the copy
    assert pdb.replacements == 4 * 7 and pdb.replacements_by_location["meta"] == 4 * 3
    # The model reads the prompt: changing it changes every row's score.
    assert all(a != b for a, b in zip(res.variant("original").scores, pdb.scores, strict=True))
    again = run_redaction(_rows(), _model(embedded_lm, tmp_path / "cache.sqlite"),
                          classes=classes, scoring="options", n_boot=200)  # fmt: skip
    assert again.calls == {"made": 0, "cached": 80}
    assert [v.scores for v in again.variants] == [v.scores for v in res.variants]


@pytest.mark.slow
@pytest.mark.model
def test_gemma_zero_shot_on_a_trimmed_controlled_subset(
    embedded_lm: tuple[Any, Any], tmp_path: Path
) -> None:
    from toolaudit.datasets import make_tcr_shortcut
    from toolaudit.redaction._registry import default_classes

    examples = make_tcr_shortcut(scale=0.05, seed=0)
    rows = select_rows(examples, eval_filter={"split": ["test"]}, limit=12, seed=0)
    rows = trim_examples(rows, keep_tools=["thermompnn_ddg", "interface_analysis"], max_lines=8)
    res = run_redaction(rows, _model(embedded_lm, tmp_path / "c.sqlite"),
                        classes=default_classes(examples), scoring="options", n_boot=500)  # fmt: skip
    assert [v.name for v in res.variants] == ["original", "pdb_id", "peptide", "format"]
    assert all(v.residuals == 0 and v.valid_rate == 1.0 for v in res.variants)
    # Zero-shot, the 270M base model puts little mass on the answer format, and format
    # redaction (headers, tags and field names; the <answer> tags are kept) lowers it
    # further (measured after the tag fix, 2026-12-03).
    orig, fmt = res.variant("original"), res.variant("format")
    assert orig.option_mass < 0.2
    assert fmt.option_mass < orig.option_mass

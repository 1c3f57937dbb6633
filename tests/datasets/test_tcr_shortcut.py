"""The generated tcr-shortcut file: counts, tool layout, the planted id, prompt copies,
determinism, and that nothing but the id carries the label."""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from toolaudit.datasets import TCR_FORMAT_PATTERNS, TCR_TOOLS, make_tcr_shortcut, write_tcr_shortcut
from toolaudit.datasets._plan import plan_counts
from toolaudit.stats import auroc
from toolaudit.traces import Example, read_jsonl

SCALE = 0.05
ID_RE = re.compile(r"^[1-9][0-9A-Z]{2}[A-Z]$")


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_tcr_shortcut(tmp_path_factory.mktemp("tcr"), scale=SCALE, seed=7)


@pytest.fixture(scope="module")
def examples(written: Path) -> list[Example]:
    return list(read_jsonl(written, Example))


def test_write_tcr_shortcut_counts_match_plan(examples: list[Example]) -> None:
    got = Counter((e.group, e.split, e.label) for e in examples)
    for cell in plan_counts(scale=SCALE):
        assert got[(cell.group, cell.split, 1)] == cell.positives
        assert got[(cell.group, cell.split, 0)] == cell.negatives
    assert {e.split for e in examples if e.group != "C0"} == {"test"}
    assert len({e.id for e in examples}) == len(examples)


def test_write_tcr_shortcut_manifest_records_counts_and_hash(written: Path) -> None:
    manifest = json.loads((written.parent / "dataset.json").read_text())
    assert manifest["name"] == "tcr-shortcut"
    assert (manifest["seed"], manifest["scale"]) == (7, SCALE)
    assert manifest["tools"] == list(TCR_TOOLS)
    assert manifest["examples"] == sum(c.total for c in plan_counts(scale=SCALE))
    assert manifest["sha256"] == hashlib.sha256(written.read_bytes()).hexdigest()


def test_tools_are_in_seed_order_and_about_1800_to_3700_chars(examples: list[Example]) -> None:
    # version 3: Tools 2 and 4 carry the calibration's diluting rows (docs/datasets.md)
    assert all([t.name for t in e.tools] == list(TCR_TOOLS) for e in examples)
    lengths = np.array([[len(t.content) for t in e.tools] for e in examples])
    assert 2_200 <= lengths.mean() <= 2_700
    means = lengths.mean(axis=0)
    assert (means[[0, 2, 4]] > 1_450).all() and (means[[0, 2, 4]] < 2_100).all()
    assert 2_600 < means[1] < 3_300 and 3_200 < means[3] < 4_200
    assert lengths.min() > 900 and lengths.max() < 6_000


def test_pdb_id_is_written_in_tool3_filename_and_tool5_complex_id(examples: list[Example]) -> None:
    for e in examples:
        pdb = e.meta["pdb_id"]
        assert ID_RE.match(pdb)
        tool3, tool5 = e.tools[2].content, e.tools[4].content
        assert re.findall(r"ThermoMPNN_inference_(\w+)\.csv", tool3) == [pdb]
        assert re.findall(r"complex_id: (\w+)", tool5) == [pdb]
        # only tools 3 and 5 carry it
        assert all(pdb not in t.content for i, t in enumerate(e.tools) if i not in (2, 4))


def test_prompt_bearing_fields_all_carry_the_sections(examples: list[Example]) -> None:
    for e in examples[:50]:
        assert e.prompt is not None and e.messages is not None
        assert [m.role for m in e.messages] == ["system", "user"]
        assert e.messages[1].content == e.prompt
        extra = e.meta["extra_info"]
        for t in e.tools:
            assert t.content in e.prompt
            assert t.content in extra["evidence"]
        assert e.prompt.index("### Step 3: thermompnn_ddg") < e.prompt.index(
            "### Step 5: interface_analysis"
        )
        assert extra["question"] in e.prompt
        assert "<answer></answer>" in e.prompt
        assert e.prompt.count(e.meta["pdb_id"]) == 2


def test_peptide_appears_in_prompt_and_tools_2_and_5(examples: list[Example]) -> None:
    for e in examples[:50]:
        pep = e.fields["peptide"]
        assert e.meta["peptide"] == pep
        assert f"Peptide: {pep}" in e.prompt  # type: ignore[operator]
        assert f"query_epitope: {pep}" in e.tools[1].content
        assert f"peptide: {pep}" in e.tools[4].content
        assert 8 <= len(pep) <= 11 and set(pep) <= set("ACDEFGHIKLMNPQRSTVWY")
        assert set(e.fields) == {"cdr3a", "cdr3b", "peptide", "mhc_allele", "mhc_sequence"}


def test_answer_follows_label_and_carries_no_id(examples: list[Example]) -> None:
    for e in examples:
        assert e.answer == ("<answer>9</answer>" if e.label else "<answer>1</answer>")


def test_clusters_are_peptide_disjoint(examples: list[Example]) -> None:
    by_group: dict[str, set[str]] = {}
    for e in examples:
        by_group.setdefault(e.group, set()).add(e.fields["peptide"])
    groups = sorted(by_group)
    for i, a in enumerate(groups):
        for b in groups[i + 1 :]:
            assert not by_group[a] & by_group[b], (a, b)


def test_format_patterns_match_the_scaffolding(examples: list[Example]) -> None:
    prompt = examples[0].prompt or ""
    hits = {p: len(re.findall(p, prompt)) for p in TCR_FORMAT_PATTERNS}
    assert hits[r"### Step \d+: [a-z_0-9]+"] == 5
    assert hits[r"</tool_result>"] == 5
    assert all(n > 0 for n in hits.values()), hits


def test_write_tcr_shortcut_is_byte_identical_for_a_seed(tmp_path: Path) -> None:
    a = write_tcr_shortcut(tmp_path / "a", scale=0.01, seed=3)
    b = write_tcr_shortcut(tmp_path / "b", scale=0.01, seed=3)
    c = write_tcr_shortcut(tmp_path / "c", scale=0.01, seed=4)
    assert a.read_bytes() == b.read_bytes()
    assert (a.parent / "dataset.json").read_bytes() == (b.parent / "dataset.json").read_bytes()
    assert a.read_bytes() != c.read_bytes()


def test_make_tcr_shortcut_equals_written_file(tmp_path: Path) -> None:
    path = write_tcr_shortcut(tmp_path, scale=0.01, seed=5)
    lines = path.read_text(encoding="utf-8").splitlines()
    made = make_tcr_shortcut(scale=0.01, seed=5)
    assert [e.model_dump_json() for e in made] == lines


def test_section_lengths_do_not_depend_on_label(examples: list[Example]) -> None:
    y = np.array([e.label for e in examples])
    for i, name in enumerate(TCR_TOOLS):
        lengths = np.array([len(e.tools[i].content) for e in examples], dtype=float)
        assert abs(auroc(y, lengths) - 0.5) < 0.08, name

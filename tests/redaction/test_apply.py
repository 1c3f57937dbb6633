"""Redaction reaches every prompt-bearing field, counts replacements, and fails on residuals."""

from __future__ import annotations

import json

import pytest

from toolaudit.redaction import RedactionResidualError, RegexSource, make_class
from toolaudit.redaction._apply import (
    check_residuals,
    collect_values,
    redact_example,
    redact_examples,
    redact_row,
)
from toolaudit.redaction._registry import BUILTIN_CLASSES
from toolaudit.redaction._trim import trim_examples
from toolaudit.traces import ChatMessage, Example, ToolSection

TOOL3 = "thermompnn_csv_path:\n/data/out/ThermoMPNN_inference_2X7Q.csv\ntotal_predictions: 2160"
TOOL5 = "=== TOOL RESULT :: interface ===\ncomplex_id: 2X7Q\npeptide: KLVALGINAV\nhotspot: F126"


def _row(pdb: str = "2X7Q", label: int = 1) -> Example:
    tool3, tool5 = TOOL3.replace("2X7Q", pdb), TOOL5.replace("2X7Q", pdb)
    prompt = f"Does it bind? <answer></answer>\nPeptide: KLVALGINAV\n{tool3}\n{tool5}"
    return Example(
        id=f"row-{pdb}",
        label=label,
        group="C1",
        split="test",
        fields={"peptide": "KLVALGINAV", "cdr3b": "CASSEGDTEAFF"},
        tools=[ToolSection(name="thermompnn_ddg", content=tool3),
               ToolSection(name="interface_analysis", content=tool5)],
        prompt=prompt,
        messages=[ChatMessage(role="system", content="expert"),
                  ChatMessage(role="user", content=prompt)],
        answer="<answer>9</answer>",
        meta={"pdb_id": pdb, "extra_info": {"question": prompt, "nested": [f"id={pdb}"]},
              "json_copy": json.dumps({"complex_id": pdb})},
    )  # fmt: skip


def _all_strings(ex: Example) -> list[str]:
    return [ex.prompt or "", *(m.content for m in ex.messages or []),
            *(t.content for t in ex.tools), *ex.fields.values(), json.dumps(ex.meta)]  # fmt: skip


def test_redact_example_reaches_prompt_messages_tools_and_meta_copies() -> None:
    new, counts, values = redact_example(_row(), BUILTIN_CLASSES["pdb_id"])
    assert values == ["2X7Q"]
    assert all("2X7Q" not in s for s in _all_strings(new))
    assert "ThermoMPNN_inference_<PDB_ID>.csv" in new.prompt
    assert "complex_id: <PDB_ID>" in new.messages[1].content
    assert new.meta["pdb_id"] == "<PDB_ID>"
    assert new.meta["extra_info"]["nested"] == ["id=<PDB_ID>"]
    assert json.loads(new.meta["json_copy"]) == {"complex_id": "<PDB_ID>"}
    # prompt 2, user message 2, tools 2, meta: pdb_id 1 + question 2 + nested 1 + json 1
    assert dict(counts) == {"prompt": 2, "messages": 2, "tools": 2, "meta": 5}


def test_redact_example_leaves_label_answer_id_and_other_text_alone() -> None:
    row = _row()
    new, _, _ = redact_example(row, BUILTIN_CLASSES["pdb_id"])
    assert (new.label, new.answer, new.id, new.group, new.split) == (
        row.label, row.answer, row.id, row.group, row.split)  # fmt: skip
    assert new.prompt == row.prompt.replace("2X7Q", "<PDB_ID>")
    assert "total_predictions: 2160" in new.prompt and "hotspot: F126" in new.prompt


def test_redact_example_peptide_uses_the_rows_own_value_everywhere() -> None:
    new, counts, values = redact_example(_row(), BUILTIN_CLASSES["peptide"])
    assert values == ["KLVALGINAV"]
    assert new.fields["peptide"] == "<PEPTIDE>" and new.fields["cdr3b"] == "CASSEGDTEAFF"
    assert "Peptide: <PEPTIDE>" in new.prompt and "peptide: <PEPTIDE>" in new.tools[1].content
    assert sum(counts.values()) == 2 + 2 + 1 + 1 + 2  # prompt, user msg, tool 5, field, meta


def test_redact_row_respects_token_edges_and_the_substring_scan_reports_glued_copies() -> None:
    cls = make_class("code", [RegexSource(r"code=(\w+)")])
    row = _row().model_copy(update={"prompt": "code=AB1 then AB1, xAB1 and AB12 and _AB1."})
    out = redact_row(row, cls)
    assert out.values == ["AB1"]
    assert out.example.prompt == "code=<CODE> then <CODE>, xAB1 and AB12 and _<CODE>."
    # Replacement is token-edge aware; the residual scan is plain substring search.
    assert [(r.path, r.value, r.count) for r in out.residuals] == [("prompt", "AB1", 2)]
    with pytest.raises(RedactionResidualError, match="field 'prompt' still contains 'AB1'"):
        redact_example(row, cls)


def test_residual_scan_catches_a_url_encoded_copy_under_meta_that_the_patterns_miss() -> None:
    cls = BUILTIN_CLASSES["pdb_id"]
    clean = redact_examples([_row("2X7Q"), _row("5N6F", label=0)], cls)
    assert clean.residuals == 0 and clean.checked_values == 2
    planted = _row("5N6F", label=0)
    planted = planted.model_copy(
        update={
            "meta": {**planted.meta, "source_url": "https://db.example/q?pdb%3D5N6F%26chain%3DA"}
        }
    )
    assert collect_values(planted.model_dump(), cls) == ["5N6F"]
    dirty = redact_examples([_row("2X7Q"), planted], cls)
    assert dirty.residuals == 1
    assert dirty.notes == [
        "residual after redacting class 'pdb_id': row 'row-5N6F', field 'meta.source_url' "
        "still contains '5N6F'"
    ]
    assert "pdb%3D5N6F%26" in dirty.examples[1].meta["source_url"]  # the patterns missed it


def test_check_residuals_raises_on_a_planted_residual() -> None:
    cls = BUILTIN_CLASSES["pdb_id"]
    new, _, values = redact_example(_row(), cls)
    check_residuals(new, cls, values)  # clean
    planted = new.model_copy(update={"meta": {**new.meta, "extra_info": {"note": "was 2X7Q"}}})
    with pytest.raises(RedactionResidualError, match=r"meta\.extra_info\.note.*2X7Q"):
        check_residuals(planted, cls, values)


def test_check_residuals_raises_when_the_source_still_matches() -> None:
    cls = BUILTIN_CLASSES["pdb_id"]
    planted = _row().model_copy(update={"prompt": "complex_id: 9ZZZ"})
    with pytest.raises(RedactionResidualError, match="still matches '9ZZZ'"):
        check_residuals(planted, cls, [])


def test_redact_examples_counts_rows_values_and_locations() -> None:
    rows = [_row("2X7Q"), _row("5N6F", label=0), _row("1QB3")]
    out = redact_examples(rows, BUILTIN_CLASSES["pdb_id"])
    assert out.replacements == 3 * 11
    assert out.by_location == {"prompt": 6, "messages": 6, "tools": 6, "fields": 0, "meta": 15}
    assert (out.rows_affected, out.distinct_values, out.residuals) == (3, 3, 0)
    assert [r.label for r in out.examples] == [1, 0, 1]


def test_format_class_replaces_scaffolding_but_not_values() -> None:
    new, counts, _ = redact_example(_row(), BUILTIN_CLASSES["format"])
    assert "=== TOOL RESULT" not in new.tools[1].content
    assert "<FORMAT>: 2X7Q" in new.tools[1].content  # field name gone, value kept
    # the scorer's answer tags survive (the seed: format redaction preserves validity)
    assert "Does it bind? <answer></answer>\n<FORMAT>: KLVALGINAV" in new.prompt
    assert counts["prompt"] > 5


def test_collect_values_reads_record_paths_and_json_fields() -> None:
    row = _row().model_copy(update={"prompt": '{"complex_id": "7QB3"}'})
    assert collect_values(row.model_dump(), BUILTIN_CLASSES["pdb_id"]) == ["2X7Q", "7QB3"]


def test_trim_examples_shortens_every_copy_of_a_tool_section() -> None:
    (row,) = trim_examples([_row()], keep_tools=["interface_analysis"], max_lines=2)
    assert "ThermoMPNN_inference" not in row.prompt + row.meta["extra_info"]["question"]
    assert row.tools[0].content == ""
    assert "complex_id: 2X7Q" in row.messages[1].content and "hotspot" not in row.prompt

"""Provenance: field attribution and token-class pattern inference."""

from __future__ import annotations

import re

from toolaudit.leakage._provenance import field_at, infer_pattern, locate, term_regex


def test_field_at_reads_key_value_and_next_line_values():
    text = "complex_id: 6DLI\nthermompnn_csv_path:\n/data/out/ThermoMPNN_inference_6DLI.csv\n"
    assert field_at(text, text.index("6DLI")) == "complex_id"
    assert field_at(text, text.index("inference_")) == "thermompnn_csv_path"
    assert field_at(text, text.index("complex")) == "complex_id (key)"


def test_infer_pattern_finds_file_name_template():
    values = [f"/data/out/ThermoMPNN_inference_{v}.csv" for v in ("6DLI", "1AO7", "21009")]
    pattern, desc = infer_pattern("thermompnn_csv_path", values, "nce_6")
    assert pattern == r"ThermoMPNN_inference_(\w+)\.csv"
    assert "ThermoMPNN_inference_" in desc
    assert re.search(pattern, values[2]).group(1) == "21009"


def test_infer_pattern_falls_back_to_key_value():
    pattern, desc = infer_pattern("complex_id", ["6DLI", "1AO7", "3QDG"], "6dl")
    assert pattern == r"complex_id\s*[:=]\s*(\w+)"
    assert re.search(pattern, "x\ncomplex_id: 3QDG\n").group(1) == "3QDG"
    assert desc == "value of `complex_id`"


def test_term_regex_respects_char_wb_padding():
    rx = term_regex(" ab", "char_wb")
    assert rx.search("x ab") and not rx.search("xab")
    assert term_regex("foo bar", "word").search("foo, x bar")


def test_locate_counts_fields_and_contexts():
    texts = {"t": ["id: A17\nname: x", "id: B17\n", "none here"]}
    src = locate("17", "char_wb", texts, ["t"], [0, 1, 2])
    assert src.fields[("t", "id")] == 2
    assert src.rows == 2
    assert "id: A17" in src.contexts[0]
    assert src.first_rows == [0, 1]  # the rows that hold it, to name their runs


def test_locate_names_json_paths():
    from toolaudit.leakage._provenance import json_field

    text = '{"order": {"items": [{"item_id": "SKU-7781"}], "status": "pending"}}'
    assert json_field(text.lower(), "sku-7781") == "$.order.items[*].item_id"
    assert json_field("not json", "x") is None
    src = locate("7781", "char_wb", {"t": [text]}, ["t"], [0])
    assert src.fields[("t", "$.order.items[*].item_id")] == 1

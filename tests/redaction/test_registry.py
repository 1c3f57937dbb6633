"""Class specs from the command line and candidate classes from leakage.json."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from toolaudit.errors import ConfigError, DataError
from toolaudit.redaction import (
    DetectorSource,
    FieldSource,
    RecordSource,
    RegexSource,
    TokenClass,
    classes_from_leakage,
    placeholder_for,
)
from toolaudit.redaction._registry import BUILTIN_CLASSES, default_classes, parse_class_specs
from toolaudit.traces import Example, ToolSection


def test_parse_class_specs_builtin_and_merged_custom_sources() -> None:
    classes = parse_class_specs(
        ["pdb_id", r"build=regex:build-(\d+)", "build=field:build_id", "build=record:meta.b",
         "build=detector:uuid"]
    )  # fmt: skip
    assert [c.name for c in classes] == ["pdb_id", "build"]
    assert classes[0].sources == BUILTIN_CLASSES["pdb_id"].sources
    assert classes[1].placeholder == "<BUILD>"
    assert classes[1].sources == (
        RegexSource(r"build-(\d+)"), FieldSource("build_id"), RecordSource("meta.b"),
        DetectorSource("uuid"))  # fmt: skip


def test_parse_class_specs_keeps_format_in_spans_mode() -> None:
    assert parse_class_specs(["format"])[0].mode == "spans"
    assert parse_class_specs(["peptide"])[0].mode == "values"


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("nosuch", "invalid --class='nosuch'"),
        ("x=regex:(a)(b)", "exactly one capture group"),
        ("x=regex:no_group", "exactly one capture group"),
        ("x=regex:(", "invalid regex"),
        ("x=glob:*.csv", "invalid class source kind='glob'"),
        ("x=detector:nosuch", "invalid detector='nosuch'"),
        ("x=field", "NAME=KIND:ARG"),
    ],
)
def test_parse_class_specs_rejects_bad_specs(spec: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message.replace("(", r"\(").replace("*", r"\*")):
        parse_class_specs([spec])


def test_placeholder_for_uppercases_the_name() -> None:
    assert placeholder_for("pdb_id") == "<PDB_ID>"
    assert placeholder_for("file path") == "<FILE_PATH>"


def _leakage_doc(classes: list[dict]) -> dict:
    return {"scopes": [], "provenance": {"features": [], "classes": classes},
            "prefix_lookup": None, "dilution": None, "partition": {}, "tools": [],
            "meta": {"command": "toolaudit leakage", "seed": 0}}  # fmt: skip


def test_classes_from_leakage_loads_the_typed_candidates(tmp_path: Path) -> None:
    doc = _leakage_doc([
        {"name": "thermompnn_ddg.thermompnn_csv_path", "kind": "regex",
         "pattern": r"inference_([0-9A-Z]{4})\.csv", "tools": ["thermompnn_ddg"],
         "support": 12, "example_values": ["1ABC"], "score": 0.4},
        {"name": "interface_analysis.complex_id", "kind": "regex",
         "pattern": r"complex_id\s*[:=]\s*(\w+)"},
    ])  # fmt: skip
    (tmp_path / "leakage.json").write_text(json.dumps(doc))
    classes = classes_from_leakage(tmp_path)
    assert [c.name for c in classes] == [
        "thermompnn_ddg.thermompnn_csv_path", "interface_analysis.complex_id"]  # fmt: skip
    assert classes[0].sources == (RegexSource(r"inference_([0-9A-Z]{4})\.csv"),)
    assert classes[0].placeholder == "<THERMOMPNN_DDG_THERMOMPNN_CSV_PATH>"
    assert (classes[0].support, classes[0].examples, classes[0].tools) == (
        12, ("1ABC",), ("thermompnn_ddg",))  # fmt: skip
    assert TokenClass.from_json(classes[0].as_json()) == classes[0]


@pytest.mark.parametrize(
    ("entry", "field"),
    [
        ({"name": "bad", "kind": "regex", "pattern": "no group"}, "provenance.classes.0.pattern"),
        ({"name": "bad", "kind": "regex"}, "provenance.classes.0.pattern"),
        ({"name": "bad", "kind": "field", "pattern": "(x)"}, "provenance.classes.0.kind"),
        ({"regex": "(x)", "token_class": "guess"}, "provenance.classes.0.name"),
    ],
)
def test_classes_from_leakage_rejects_an_invalid_candidate_naming_the_field(
    tmp_path: Path, entry: dict, field: str
) -> None:
    (tmp_path / "leakage.json").write_text(json.dumps(_leakage_doc([entry])))
    with pytest.raises(DataError, match=rf"leakage\.json: field '{re.escape(field)}'"):
        classes_from_leakage(tmp_path)


def test_classes_from_leakage_missing_file_names_the_path(tmp_path: Path) -> None:
    with pytest.raises(DataError, match="leakage.json: no such file"):
        classes_from_leakage(tmp_path / "leakage.json")


def test_default_classes_controlled_vs_generic() -> None:
    tcr = ["cdr3b_biophysics", "mcpas_retrieval", "thermompnn_ddg", "stability_summary",
           "interface_analysis"]  # fmt: skip
    row = Example(
        id="a", label=1, group="C1", tools=[ToolSection(name=n, content="x") for n in tcr]
    )
    assert [c.name for c in default_classes([row])] == ["pdb_id", "peptide", "format"]
    other = Example(id="b", label=0, group="g", tools=[ToolSection(name="search", content="x")])
    names = [c.name for c in default_classes([other])]
    assert "peptide" not in names and {"uuid", "secret", "format", "pdb_id"} <= set(names)

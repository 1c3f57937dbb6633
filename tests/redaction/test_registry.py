"""Class specs from the command line and candidate classes from leakage.json."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from toolaudit.errors import ConfigError, DataError
from toolaudit.redaction import (
    BUILTIN_CLASSES,
    DetectorSource,
    FieldSource,
    RecordSource,
    RegexSource,
    classes_from_leakage,
    default_classes,
    parse_class_specs,
    placeholder_for,
)
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


def test_classes_from_leakage_reads_provenance_classes(tmp_path: Path) -> None:
    doc = {"provenance": {
        "features": [{"scope": "thermompnn_ddg", "term": "_21"}],
        "classes": [
            {"name": "thermompnn_csv_path", "kind": "regex", "pattern": r"inference_([0-9A-Z]{4})\.csv"},
            {"name": "bad", "kind": "regex", "pattern": "no group"},
        ]}}  # fmt: skip
    (tmp_path / "leakage.json").write_text(json.dumps(doc))
    classes = classes_from_leakage(tmp_path)
    assert [c.name for c in classes] == ["thermompnn_csv_path"]
    assert classes[0].sources == (RegexSource(r"inference_([0-9A-Z]{4})\.csv"),)


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

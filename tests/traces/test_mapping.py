"""JSONL in a foreign layout read through a FieldMapping of JMESPath expressions."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from toolaudit.errors import TraceFormatError
from toolaudit.traces import FieldMapping, load_examples
from toolaudit.traces._mapping import search

RECORDS = [
    {
        "uid": "r1",
        "task": {"id": "T7"},
        "meta": {"reward": 0.9},
        "split": "test",
        "prompt": "question?",
        "tool_outputs": [{"name": "search", "text": "abc"}, {"name": "calc", "text": {"v": 2}}],
    },
    {
        "uid": "r2",
        "task": {"id": "T8"},
        "meta": {"reward": 0.2},
        "split": "train",
        "prompt": "other?",
        "tool_outputs": [],
    },
]
MAPPING = {
    "id": "uid",
    "label": "meta.reward",
    "label_threshold": 0.5,
    "group": "task.id",
    "split": "split",
    "tools": "tool_outputs[*].text",
    "tool_names": "tool_outputs[*].name",
    "prompt": "prompt",
}


def _write(tmp_path: Path, records: list[dict], mapping: dict) -> tuple[Path, Path]:
    data = tmp_path / "foreign.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in records))
    mp = tmp_path / "mapping.json"
    mp.write_text(json.dumps(mapping))
    return data, mp


def test_search_keeps_the_dotted_grammar_and_adds_filters() -> None:
    assert search("tool_outputs[*].name", RECORDS[0]) == ["search", "calc"]
    assert search("tool_outputs[1].text.v", RECORDS[0]) == 2
    assert search("task.name", RECORDS[0]) is None
    assert search("tool_outputs[?name=='calc'].text.v", RECORDS[0]) == [2]


def test_field_mapping_rejects_invalid_expression_naming_key(tmp_path: Path) -> None:
    mp = tmp_path / "m.json"
    mp.write_text(json.dumps({"label": "meta..reward"}))
    with pytest.raises(TraceFormatError) as info:
        FieldMapping.from_file(mp)
    assert info.value.field == "label"
    assert "invalid JMESPath expression 'meta..reward'" in str(info.value)


def test_load_mapped_builds_examples(tmp_path: Path) -> None:
    data, mp = _write(tmp_path, RECORDS, MAPPING)
    exs = list(load_examples(data, mapping=FieldMapping.from_file(mp)))
    assert [(e.id, e.label, e.group, e.split) for e in exs] == [
        ("r1", 1, "T7", "test"),
        ("r2", 0, "T8", "train"),
    ]
    assert [(t.name, t.content) for t in exs[0].tools] == [("search", "abc"), ("calc", '{"v": 2}')]
    assert exs[0].prompt == "question?" and exs[1].tools == []


def test_load_mapped_numeric_label_without_threshold_is_an_error(tmp_path: Path) -> None:
    data, mp = _write(tmp_path, RECORDS, {**MAPPING, "label_threshold": None})
    with pytest.raises(TraceFormatError) as info:
        list(load_examples(data, mapping=FieldMapping.from_file(mp)))
    assert (info.value.line, info.value.field) == (1, "meta.reward")
    assert "label_threshold" in str(info.value)


def test_load_mapped_missing_field_names_line_and_path(tmp_path: Path) -> None:
    bad = [RECORDS[0], {k: v for k, v in RECORDS[1].items() if k != "task"}]
    data, mp = _write(tmp_path, bad, MAPPING)
    with pytest.raises(TraceFormatError) as info:
        list(load_examples(data, mapping=FieldMapping.from_file(mp)))
    assert (info.value.line, info.value.field) == (2, "task.id")
    assert "mapping 'group' selected nothing" in str(info.value)


def test_load_mapped_optional_key_allows_nothing(tmp_path: Path) -> None:
    bad = [RECORDS[0], {k: v for k, v in RECORDS[1].items() if k != "task"}]
    data, mp = _write(tmp_path, bad, {**MAPPING, "optional": ["group"]})
    exs = list(load_examples(data, mapping=FieldMapping.from_file(mp)))
    assert [e.group for e in exs] == ["T7", ""]


def test_load_mapped_filter_expression_selects_tool_sections(tmp_path: Path) -> None:
    rows = [
        {
            "y": 1,
            "messages": [
                {"role": "user", "content": "q"},
                {"role": "tool", "name": "search", "content": "abc"},
                {"role": "assistant", "content": "a"},
                {"role": "tool", "name": "calc", "content": "42"},
            ],
        }
    ]
    mapping = {
        "label": "y",
        "tools": "messages[?role=='tool'].content",
        "tool_names": "messages[?role=='tool'].name",
    }
    data, mp = _write(tmp_path, rows, mapping)
    (ex,) = load_examples(data, mapping=FieldMapping.from_file(mp))
    assert [(t.name, t.content) for t in ex.tools] == [("search", "abc"), ("calc", "42")]


def test_field_mapping_from_file_rejects_unknown_key(tmp_path: Path) -> None:
    mp = tmp_path / "m.json"
    mp.write_text(json.dumps({"label": "y", "lable_threshold": 1}))
    with pytest.raises(TraceFormatError) as info:
        FieldMapping.from_file(mp)
    assert info.value.field == "lable_threshold"


def test_load_mapped_messages_given_as_an_object_says_so(tmp_path: Path) -> None:
    rows = [{"y": 1, "chat": {"role": "user", "content": "hi"}}]
    data, mp = _write(tmp_path, rows, {"label": "y", "messages": "chat"})
    with pytest.raises(TraceFormatError) as info:
        list(load_examples(data, mapping=FieldMapping.from_file(mp)))
    assert (info.value.line, info.value.field) == (1, "chat")
    assert "expected a list of messages, got an object" in str(info.value)

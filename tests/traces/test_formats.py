"""Format detection and the load_episodes / load_examples entry points."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from toolaudit.errors import ConfigError, TraceFormatError
from toolaudit.traces import (
    FORMAT_NAMES,
    FORMATS,
    FieldMapping,
    detect_format,
    load_episodes,
    load_examples,
)


def test_formats_registry_lists_every_format_name() -> None:
    assert set(FORMATS) == set(FORMAT_NAMES)


def test_detect_format_on_shared_files(shared_data: Path) -> None:
    for path in (shared_data / "tau2" / "simulations").glob("*.json"):
        assert detect_format(path) == "tau2"
    for path in (shared_data / "tau-bench").glob("*.json"):
        assert detect_format(path) == "tau-bench"
    assert detect_format(shared_data / "tau2" / "domains" / "retail") == "tau2-domain"


def test_detect_format_on_compact_single_line_documents(shared_data: Path, tmp_path: Path) -> None:
    src = shared_data / "tau2" / "simulations" / "airline__gpt-4.1__user-gpt-4.1__test20x1.json"
    compact = tmp_path / "compact.json"
    compact.write_text(json.dumps(json.loads(src.read_text())))
    assert detect_format(compact) == "tau2"
    assert len(list(load_episodes(compact))) == 20


def test_detect_format_jsonl_kinds(tmp_path: Path) -> None:
    ex = tmp_path / "ex.jsonl"
    ex.write_text(json.dumps({"id": "1", "label": 1, "group": "g", "tools": []}) + "\n")
    ep = tmp_path / "ep.jsonl"
    ep.write_text(json.dumps({"task_id": "1", "messages": []}) + "\n")
    assert detect_format(ex) == "examples"
    assert detect_format(ep) == "episodes"
    assert detect_format(ep, mapping=FieldMapping(label="task_id")) == "mapped"


def test_load_episodes_rejects_domain_and_examples(shared_data: Path, tmp_path: Path) -> None:
    with pytest.raises(TraceFormatError, match="not agent episodes"):
        load_episodes(shared_data / "tau2" / "domains" / "retail")
    ex = tmp_path / "ex.jsonl"
    ex.write_text(json.dumps({"id": "1", "label": 1, "group": "g"}) + "\n")
    with pytest.raises(TraceFormatError, match="not agent episodes"):
        load_episodes(ex)


def test_load_episodes_explicit_wrong_format_names_field(shared_data: Path) -> None:
    path = shared_data / "tau-bench" / "retail__tool-calling__openai-model-masked__100x1.json"
    with pytest.raises(TraceFormatError) as info:
        list(load_episodes(path, format="tau2"))
    assert info.value.field == "simulations"


def test_load_examples_invalid_format_names_allowed_values(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"invalid format='csv'; allowed: 'auto', 'tau2'"):
        load_examples(tmp_path / "x", format="csv")
    with pytest.raises(ConfigError, match="mapping"):
        load_examples(tmp_path / "x", format="mapped")


def test_load_taubench_malformed_arguments_names_record(shared_data: Path, tmp_path: Path) -> None:
    src = shared_data / "tau-bench" / "retail__tool-calling__openai-model-masked__100x1.json"
    doc = json.loads(src.read_text())
    j = next(k for k, m in enumerate(doc[5]["traj"]) if m.get("tool_calls"))
    doc[5]["traj"][j]["tool_calls"][0]["function"]["arguments"] = "{not json"
    bad = tmp_path / "tb.json"
    bad.write_text(json.dumps(doc))
    with pytest.raises(TraceFormatError) as info:
        list(load_episodes(bad))
    assert info.value.field == f"[5].traj[{j}].tool_calls[0].function.arguments"

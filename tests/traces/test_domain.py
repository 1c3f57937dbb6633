"""tau2 domain folder loader on the real retail domain."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.traces._counts import domain_counts
from toolaudit.errors import TraceFormatError
from toolaudit.traces import ToolCall, load_domain


@pytest.fixture(scope="module")
def retail(shared_data: Path) -> Path:
    return shared_data / "tau2" / "domains" / "retail"


def test_load_domain_counts_match_raw_json(retail: Path) -> None:
    want = domain_counts(retail)
    dom = load_domain(retail)
    assert dom.name == "retail"
    assert len(dom.tasks) == want["tasks"] == 114
    assert dom.n_reference_actions() == want["tool_calls"] == 550
    assert set(dom.db) == {"products", "users", "orders"}
    assert len(dom.db["orders"]) == 1000
    assert dom.policy.startswith("# Retail agent policy")


def test_load_domain_reference_actions_keep_order_and_arguments(retail: Path) -> None:
    raw = json.loads((retail / "tasks.json").read_text())
    dom = load_domain(retail)
    for t_raw, task in zip(raw, dom.tasks, strict=True):
        assert task.id == t_raw["id"]
        acts = t_raw["evaluation_criteria"]["actions"] or []
        assert [(a.name, dict(a.arguments)) for a in task.reference_actions] == [
            (a["name"], a["arguments"]) for a in acts
        ]
    first = dom.task("0").reference_actions[0].as_tool_call()
    assert first == ToolCall(
        id="0_0",
        name="find_user_id_by_name_zip",
        arguments={"first_name": "Yusuf", "last_name": "Rossi", "zip": "19122"},
    )
    assert "Yusuf Rossi" in dom.task("0").instructions


def test_load_domain_splits_match_split_file(retail: Path) -> None:
    splits = json.loads((retail / "split_tasks.json").read_text())
    dom = load_domain(retail)
    assert {k: len(v) for k, v in dom.splits.items()} == {k: len(v) for k, v in splits.items()}
    assert [t.id for t in dom.split("test")] == splits["test"]


def test_load_domain_rejects_folder_without_tasks(tmp_path: Path) -> None:
    with pytest.raises(TraceFormatError, match="tasks.json"):
        load_domain(tmp_path)


def test_load_domain_names_task_with_missing_action_name(tmp_path: Path) -> None:
    (tmp_path / "tasks.json").write_text(
        json.dumps([{"id": "7", "evaluation_criteria": {"actions": [{"arguments": {}}]}}])
    )
    with pytest.raises(TraceFormatError) as info:
        load_domain(tmp_path)
    assert info.value.field == "[0].evaluation_criteria.actions[0].name"


def test_load_domain_mistyped_criteria_names_field(tmp_path: Path) -> None:
    (tmp_path / "tasks.json").write_text(
        json.dumps([{"id": "1", "evaluation_criteria": {"actions": [], "nl_assertions": 7}}])
    )
    with pytest.raises(TraceFormatError) as info:
        load_domain(tmp_path)
    assert info.value.field == "[0].evaluation_criteria.nl_assertions"
    assert "expected a list, got an integer" in str(info.value)

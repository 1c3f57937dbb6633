"""tau-bench v1 trajectory-list loader, checked against counts taken from the real file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.traces._counts import taubench_counts
from toolaudit.traces import load_episodes

NAME = "retail__tool-calling__openai-model-masked__100x1.json"


@pytest.fixture(scope="module")
def path(shared_data: Path) -> Path:
    return shared_data / "tau-bench" / NAME


def test_taubench_shared_files_are_all_covered(shared_data: Path) -> None:
    assert [p.name for p in (shared_data / "tau-bench").glob("*.json")] == [NAME]


def test_load_taubench_counts_match_raw_json(path: Path) -> None:
    want = taubench_counts(path)
    eps = list(load_episodes(path))
    assert len(eps) == want["episodes"] == 100
    assert len({e.task_id for e in eps}) == want["tasks"]
    assert sum(len(e.tool_calls()) for e in eps) == want["tool_calls"]
    assert sum(len(e.tool_results()) for e in eps) == want["tool_results"]
    assert sum(m.error for e in eps for m in e.tool_results()) == want["tool_errors"]
    assert sum(e.reward or 0.0 for e in eps) / len(eps) == pytest.approx(want["mean_reward"])


def test_load_taubench_parses_string_arguments(path: Path) -> None:
    raw = json.loads(path.read_text())[0]
    call = next(m for m in raw["traj"] if m.get("tool_calls"))["tool_calls"][0]
    ep = next(iter(load_episodes(path, format="tau-bench")))
    first = ep.tool_calls()[0]
    assert first.id == call["id"]
    assert first.name == call["function"]["name"]
    assert first.arguments == json.loads(call["function"]["arguments"])
    assert ep.messages[0].role == "system"
    assert ep.source["domain"] == "retail"
    assert ep.source["agent_model"] == "openai-model-masked"


def test_load_taubench_components_from_reward_info(path: Path) -> None:
    raw = json.loads(path.read_text())
    eps = list(load_episodes(path))
    missing = [i for i, r in enumerate(raw) if r["info"]["reward_info"] is None]
    assert len(missing) == 1
    assert eps[missing[0]].reward == raw[missing[0]]["reward"]
    assert eps[missing[0]].reward_components is None
    with_actions = [
        i
        for i, r in enumerate(raw)
        if "r_actions" in (r["info"]["reward_info"] or {}).get("info", {})
    ]
    assert with_actions
    for i in with_actions:
        assert eps[i].reward_components == {
            "r_actions": raw[i]["info"]["reward_info"]["info"]["r_actions"]
        }

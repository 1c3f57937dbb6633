"""tau2-bench results loader, checked against counts taken straight from the real files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.traces._counts import tau2_counts
from toolaudit.traces import load_episodes
from toolaudit.traces._tau2 import load_tau2

SIM_FILES = [
    "airline__gemini-2.5-flash__user-same__10tasks-x2.json",
    "airline__gpt-4.1__user-gpt-4.1__test20x1.json",
    "airline__grok-4-fast-reasoning__user-same__41tasks-66sims.json",
    "airline__qwen2.5-7b__user-gpt-4.1__50x1.json",
    "retail__ft-gpt-4.1-sft__user-gpt-4.1__test40x1.json",
    "retail__gpt-4.1__user-gpt-4.1__test40x1.json",
]


def test_tau2_shared_files_are_all_covered(shared_data: Path) -> None:
    found = sorted(p.name for p in (shared_data / "tau2" / "simulations").glob("*.json"))
    assert found == sorted(SIM_FILES)


@pytest.mark.parametrize("name", SIM_FILES)
def test_load_tau2_counts_match_raw_json(shared_data: Path, name: str) -> None:
    path = shared_data / "tau2" / "simulations" / name
    want = tau2_counts(path)
    eps = list(load_episodes(path))
    assert len(eps) == want["episodes"]
    assert len({e.task_id for e in eps}) == want["tasks"]
    assert sum(len(e.tool_calls()) for e in eps) == want["tool_calls"]
    assert sum(len(e.tool_results()) for e in eps) == want["tool_results"]
    assert sum(m.error for e in eps for m in e.tool_results()) == want["tool_errors"]
    rewards = [e.reward for e in eps if e.reward is not None]
    assert sum(rewards) / len(rewards) == pytest.approx(want["mean_reward"])
    assert sum(e.reward_components is None for e in eps) == want["no_breakdown"]


def test_load_tau2_early_terminations_keep_reward_without_components(shared_data: Path) -> None:
    path = shared_data / "tau2" / "simulations" / "airline__qwen2.5-7b__user-gpt-4.1__50x1.json"
    eps = list(load_tau2(path))
    early = [e for e in eps if e.termination_reason in ("agent_error", "too_many_errors")]
    assert len(early) == 10
    assert all(e.reward == 0.0 and e.reward_components is None for e in early)
    normal = [e for e in eps if e.termination_reason == "user_stop"]
    assert len(normal) == 40
    assert all(set(e.reward_components or {}) == {"DB", "COMMUNICATE"} for e in normal)


def test_load_tau2_tool_results_name_the_matching_call(shared_data: Path) -> None:
    path = shared_data / "tau2" / "simulations" / "retail__gpt-4.1__user-gpt-4.1__test40x1.json"
    for ep in load_tau2(path):
        names = {c.id: c.name for c in ep.tool_calls()}
        for res in ep.tool_results():
            assert res.tool_call_id in names
            assert res.name == names[res.tool_call_id]


def test_load_tau2_records_source_metadata(shared_data: Path) -> None:
    path = shared_data / "tau2" / "simulations" / "airline__qwen2.5-7b__user-gpt-4.1__50x1.json"
    raw = json.loads(path.read_text())["simulations"][0]
    ep = next(iter(load_tau2(path)))
    assert ep.source["domain"] == "airline"
    assert ep.source["agent_model"] == "ollama_chat/qwen2.5:7b"
    assert ep.source["simulation_id"] == raw["id"] == ep.source["episode_id"]
    assert ep.source["file"] == str(path)
    assert ep.task_id == str(raw["task_id"])
    assert ep.seed == raw["seed"]
    first_call = next(m for m in raw["messages"] if m.get("tool_calls"))["tool_calls"][0]
    assert ep.tool_calls()[0].arguments == first_call["arguments"]


@pytest.mark.parametrize(
    ("name", "tasks", "trials"),
    [
        ("airline__gemini-2.5-flash__user-same__10tasks-x2.json", 10, {2: 10}),
        (
            "airline__grok-4-fast-reasoning__user-same__41tasks-66sims.json",
            41,
            {1: 17, 2: 23, 3: 1},
        ),
    ],
)
def test_load_tau2_multi_trial_files_keep_every_trial(
    shared_data: Path, name: str, tasks: int, trials: dict[int, int]
) -> None:
    from collections import Counter

    path = shared_data / "tau2" / "simulations" / name
    raw = json.loads(path.read_text())["simulations"]
    eps = list(load_tau2(path))
    assert [(e.task_id, e.trial) for e in eps] == [(str(s["task_id"]), s["trial"]) for s in raw]
    per_task = Counter(e.task_id for e in eps)
    assert len(per_task) == tasks
    assert dict(Counter(per_task.values())) == trials

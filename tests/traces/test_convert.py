"""Episode -> Example conversion on real tau2 runs and on a hand-made episode."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from toolaudit.traces import (
    ConversionCounts,
    Episode,
    Message,
    ToolCall,
    episodes_to_examples,
    load_episodes,
    load_examples,
)
from toolaudit.traces._convert import episode_to_example

QWEN = "airline__qwen2.5-7b__user-gpt-4.1__50x1.json"


def _episode(reward: float | None, task: str = "t1") -> Episode:
    return Episode(
        task_id=task,
        messages=[
            Message(role="user", content="hi"),
            Message(
                role="assistant",
                tool_calls=[
                    ToolCall(id="a", name="lookup", arguments={"q": 1}),
                    ToolCall(id="b", name="refund", arguments={}),
                ],
            ),
            Message(role="tool", tool_call_id="b", content="Error: no", error=True),
            Message(role="tool", tool_call_id="a", content="found"),
        ],
        reward=reward,
    )


def test_episode_to_example_names_sections_by_matching_call() -> None:
    ex = episode_to_example(_episode(1.0))
    assert [(t.name, t.content) for t in ex.tools] == [("refund", "Error: no"), ("lookup", "found")]
    assert ex.label == 1 and ex.group == "t1" and ex.split == ""
    assert ex.meta["tool_errors"] == [True, False]


def test_episode_to_example_threshold_sets_label() -> None:
    assert episode_to_example(_episode(0.5)).label == 0
    assert episode_to_example(_episode(0.5), threshold=0.5).label == 1


def test_episode_to_example_id_is_stable() -> None:
    assert episode_to_example(_episode(1.0)).id == episode_to_example(_episode(1.0)).id
    assert episode_to_example(_episode(1.0)).id != episode_to_example(_episode(1.0, "t2")).id


def test_episodes_to_examples_skips_unrewarded_with_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    counts = ConversionCounts()
    with caplog.at_level(logging.WARNING):
        out = list(
            episodes_to_examples([_episode(1.0), _episode(None), _episode(0.0)], counts=counts)
        )
    assert [e.label for e in out] == [1, 0]
    assert (counts.converted, counts.skipped_no_reward) == (2, 1)
    assert "skipped 1 episode(s) without a reward" in caplog.text


def test_load_examples_from_tau2_matches_raw_runs(shared_data: Path) -> None:
    path = shared_data / "tau2" / "simulations" / QWEN
    sims = json.loads(path.read_text())["simulations"]
    examples = list(load_examples(path))
    assert len(examples) == len(sims) == 50
    assert sum(e.label for e in examples) == sum(s["reward_info"]["reward"] >= 1.0 for s in sims)
    assert [e.group for e in examples] == [s["task_id"] for s in sims]
    assert [e.id for e in examples] == [s["id"] for s in sims]
    for ex, sim in zip(examples, sims, strict=True):
        results = [m["content"] for m in sim["messages"] if m["role"] == "tool"]
        assert [t.content for t in ex.tools] == results
    names = {t.name for e in examples for t in e.tools}
    assert "get_reservation_details" in names and "unknown" not in names


def test_load_examples_episode_roundtrip_through_jsonl(shared_data: Path, tmp_path: Path) -> None:
    from toolaudit.traces import write_jsonl

    src = shared_data / "tau-bench" / "retail__tool-calling__openai-model-masked__100x1.json"
    out = tmp_path / "eps.jsonl"
    assert write_jsonl(out, load_episodes(src)) == 100
    back = list(load_episodes(out))
    assert back == list(load_episodes(src))
    assert [e.label for e in load_examples(out)] == [e.label for e in load_examples(src)]

"""Episodes from any JSONL through a JMESPath mapping: the shipped OpenAI chat and
Langfuse trace mappings on real tau2 runs rewritten in those layouts, and ``leakage``
on a mapped chat JSONL."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.traces._counts import tau2_counts
from tests.traces._layouts import langfuse_jsonl, openai_chat_jsonl
from toolaudit.cli.main import main
from toolaudit.errors import TraceFormatError
from toolaudit.traces import FieldMapping, load_episodes, load_examples

RETAIL = "retail__gpt-4.1__user-gpt-4.1__test40x1.json"


@pytest.fixture()
def chat(shared_data: Path, tmp_path: Path) -> Path:
    return openai_chat_jsonl(shared_data / "tau2" / "simulations" / RETAIL, tmp_path / "chat.jsonl")


def test_openai_chat_mapping_counts_match_tau2(
    shared_data: Path, chat: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    want = tau2_counts(shared_data / "tau2" / "simulations" / RETAIL)
    assert main(["traces", "inspect", str(chat), "--mapping", "openai-chat", "--json"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert (got["format"], got["records"]) == ("mapped", "episodes")
    for key in ("episodes", "tasks", "tool_calls", "tool_results"):
        assert got[key] == want[key], key
    assert got["mean_reward"] == pytest.approx(want["mean_reward"])
    assert got["tool_errors"] == 0  # OpenAI's format has no error flag


def test_openai_chat_mapping_episodes_equal_tau2_episodes(shared_data: Path, chat: Path) -> None:
    mapped = list(load_episodes(chat, mapping=FieldMapping.from_file("openai-chat")))
    native = list(load_episodes(shared_data / "tau2" / "simulations" / RETAIL))
    assert [e.task_id for e in mapped] == [e.task_id for e in native]
    for a, b in zip(mapped, native, strict=True):
        assert [(c.id, c.name, c.arguments) for c in a.tool_calls()] == [
            (c.id, c.name, c.arguments) for c in b.tool_calls()
        ]
        assert [(m.tool_call_id, m.name, m.content) for m in a.tool_results()] == [
            (m.tool_call_id, m.name, m.content) for m in b.tool_results()
        ]
        assert a.reward == b.reward


def test_langfuse_mapping_reads_last_generation_and_reward_score(
    shared_data: Path, tmp_path: Path
) -> None:
    src = shared_data / "tau2" / "simulations" / RETAIL
    path = langfuse_jsonl(src, tmp_path / "langfuse.jsonl")
    mapped = list(load_episodes(path, mapping=FieldMapping.from_file("langfuse-trace")))
    native = list(load_episodes(src))
    want = tau2_counts(src)
    assert len(mapped) == want["episodes"]
    assert sum(len(e.tool_calls()) for e in mapped) == want["tool_calls"]
    assert sum(len(e.tool_results()) for e in mapped) == want["tool_results"]
    assert [e.reward for e in mapped] == [e.reward for e in native]
    assert [e.action_names() for e in mapped] == [e.action_names() for e in native]


def test_leakage_runs_on_mapped_chat_jsonl(
    shared_data: Path, chat: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    common = ["--features", "word_1_2", "--scopes", "full", "get_order_details"]
    common += ["--no-dilution", "--n-boot", "50", "--cv-folds", "2", "--json"]
    out = tmp_path / "leak-chat"
    assert main(["leakage", str(chat), "--mapping", "openai-chat", "--out", str(out), *common]) == 0
    mapped = json.loads(capsys.readouterr().out)["scopes"]
    src = shared_data / "tau2" / "simulations" / RETAIL
    assert main(["leakage", str(src), "--out", str(tmp_path / "leak-tau2"), *common]) == 0
    native = json.loads(capsys.readouterr().out)["scopes"]
    assert {s["scope"] for s in mapped} == {"full", "get_order_details"}
    # Same runs, same tool sections, same labels: the same AUROC for every scope.
    assert [(s["scope"], s["auroc"]) for s in mapped] == [(s["scope"], s["auroc"]) for s in native]
    assert (out / "leakage.json").is_file()


def test_mapped_examples_from_episode_mapping_label_by_threshold(chat: Path) -> None:
    exs = list(load_examples(chat, mapping=FieldMapping.from_file("openai-chat"), threshold=1.0))
    sims = [json.loads(line)["metadata"] for line in chat.read_text().splitlines()]
    assert [e.label for e in exs] == [int(s["reward"] >= 1.0) for s in sims]
    assert [e.group for e in exs] == [s["task_id"] for s in sims]


# --- bad input: exit 2 and one line naming the file, the line and the field


def _fails(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    code = main(list(argv))
    err = capsys.readouterr().err
    assert code == 2
    assert "Traceback" not in err
    assert len(err.strip().splitlines()) == 1, err
    return err.strip()


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def _write(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_mapping_expression_selecting_nothing_exits_2(
    chat: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = _lines(chat)
    del rows[2]["metadata"]["task_id"]
    bad = _write(tmp_path / "bad.jsonl", rows)
    err = _fails(capsys, "traces", "inspect", str(bad), "--mapping", "openai-chat")
    assert f"{bad}, line 3, field 'metadata.task_id': mapping 'task_id' selected nothing" in err
    err = _fails(
        capsys, "leakage", str(bad), "--mapping", "openai-chat", "--out", str(tmp_path / "o")
    )
    assert f"{bad}, line 3, field 'metadata.task_id'" in err
    redact = ["redact", str(bad), "--mapping", "openai-chat", "--out", str(tmp_path / "r")]
    err = _fails(capsys, *redact, "--model", "sklearn:none.joblib")
    assert f"{bad}, line 3, field 'metadata.task_id'" in err  # read before any model loads


def test_mapping_messages_given_as_a_dict_says_so(
    chat: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = _lines(chat)
    rows[1]["messages"] = {"role": "user", "content": "hi"}
    bad = _write(tmp_path / "dict.jsonl", rows)
    err = _fails(capsys, "traces", "inspect", str(bad), "--mapping", "openai-chat")
    assert f"{bad}, line 2, field 'messages': expected a list of messages, got an object" in err


def test_mapping_malformed_tool_arguments_name_the_message(
    chat: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = _lines(chat)
    j = next(i for i, m in enumerate(rows[0]["messages"]) if m.get("tool_calls"))
    rows[0]["messages"][j]["tool_calls"][0]["function"]["arguments"] = "{oops"
    bad = _write(tmp_path / "args.jsonl", rows)
    err = _fails(capsys, "traces", "inspect", str(bad), "--mapping", "openai-chat")
    want = f"line 1, field 'messages[{j}].tool_calls[0].function.arguments': arguments are not JSON"
    assert want in err


def test_mapping_unknown_builtin_or_missing_file_exits_2(
    chat: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    err = _fails(capsys, "traces", "inspect", str(chat), "--mapping", "no-such-mapping")
    assert "cannot read mapping file no-such-mapping" in err and "openai-chat" in err


def test_episode_mapping_requires_task_id_and_messages(tmp_path: Path) -> None:
    mp = tmp_path / "m.json"
    mp.write_text(json.dumps({"kind": "episodes", "messages": "messages"}))
    with pytest.raises(TraceFormatError, match="an Episode mapping needs 'task_id'"):
        FieldMapping.from_file(mp)

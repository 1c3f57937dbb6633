"""``toolaudit traces inspect|convert`` through the real CLI entry point."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.traces._counts import domain_counts, tau2_counts, taubench_counts
from toolaudit.cli.main import main
from toolaudit.traces import Example, ToolSection, load_examples, write_jsonl

STABLE = {"format", "episodes", "tasks", "tool_calls", "tool_results", "mean_reward"}
TAU2 = [
    "airline__gpt-4.1__user-gpt-4.1__test20x1.json",
    "airline__qwen2.5-7b__user-gpt-4.1__50x1.json",
    "retail__ft-gpt-4.1-sft__user-gpt-4.1__test40x1.json",
    "retail__gpt-4.1__user-gpt-4.1__test40x1.json",
]
TAUBENCH = "retail__tool-calling__openai-model-masked__100x1.json"


def _inspect_json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict:
    assert main(["traces", "inspect", *argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def _expect(got: dict, want: dict, fmt: str) -> None:
    assert STABLE <= set(got)
    assert got["format"] == fmt
    for key in ("episodes", "tasks", "tool_calls", "tool_results", "tool_errors"):
        assert got[key] == want[key], key
    assert got["mean_reward"] == pytest.approx(want["mean_reward"])


@pytest.mark.parametrize("name", TAU2)
def test_inspect_tau2_json_matches_raw_counts(
    shared_data: Path, capsys: pytest.CaptureFixture[str], name: str
) -> None:
    path = shared_data / "tau2" / "simulations" / name
    _expect(_inspect_json(capsys, str(path)), tau2_counts(path), "tau2")


def test_inspect_taubench_json_matches_raw_counts(
    shared_data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = shared_data / "tau-bench" / TAUBENCH
    _expect(_inspect_json(capsys, str(path)), taubench_counts(path), "tau-bench")


def test_inspect_domain_counts_tasks_and_reference_actions(
    shared_data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = shared_data / "tau2" / "domains" / "retail"
    got = _inspect_json(capsys, str(path))
    want = domain_counts(path)
    assert (got["format"], got["episodes"], got["tool_results"]) == ("tau2-domain", 0, 0)
    assert (got["tasks"], got["tool_calls"]) == (want["tasks"], want["tool_calls"])
    assert got["mean_reward"] is None


def test_inspect_examples_jsonl_counts_records_groups_sections(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "ex.jsonl"
    recs = [
        Example(
            id=str(i),
            label=i % 2,
            group=f"g{i % 3}",
            tools=[ToolSection(name="a", content="x")] * (i % 4),
        )  # type: ignore[arg-type]
        for i in range(10)
    ]
    write_jsonl(path, recs)
    got = _inspect_json(capsys, str(path))
    assert (got["format"], got["episodes"], got["tasks"]) == ("examples", 10, 3)
    assert got["tool_results"] == sum(i % 4 for i in range(10)) == 13
    assert got["mean_reward"] == 0.5


def test_inspect_table_shows_counts(shared_data: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = shared_data / "tau-bench" / TAUBENCH
    assert main(["traces", "inspect", str(path)]) == 0
    out = capsys.readouterr().out
    assert "tool calls" in out and "793" in out and "0.730" in out


def test_convert_writes_examples_for_leakage(
    shared_data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src = shared_data / "tau2" / "simulations" / TAU2[1]
    out = tmp_path / "airline.jsonl"
    assert main(["traces", "convert", str(src), "--out", str(out), "--json"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert (got["written"], got["skipped_no_reward"]) == (50, 0)
    exs = list(load_examples(out))
    sims = json.loads(src.read_text())["simulations"]
    assert sum(e.label for e in exs) == sum(s["reward_info"]["reward"] >= 1 for s in sims) == 9


def test_convert_episodes_then_inspect_gives_same_counts(
    shared_data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src = shared_data / "tau2" / "simulations" / TAU2[0]
    out = tmp_path / "eps.jsonl"
    assert main(["traces", "convert", str(src), "--out", str(out), "--to", "episodes"]) == 0
    capsys.readouterr()
    got = _inspect_json(capsys, str(out))
    assert got["format"] == "episodes"
    _expect(got, tau2_counts(src), "episodes")


def test_convert_to_examples_keeps_the_tool_error_flags(
    shared_data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 44: the retail test40 file has 12 tool results flagged as errors; its
    examples counted 0."""
    src = shared_data / "tau2" / "simulations" / "retail__gpt-4.1__user-gpt-4.1__test40x1.json"
    before = _inspect_json(capsys, str(src))
    out = tmp_path / "retail.jsonl"
    assert main(["traces", "convert", str(src), "--out", str(out)]) == 0
    capsys.readouterr()
    after = _inspect_json(capsys, str(out))
    assert before["tool_errors"] == after["tool_errors"] == 12


# --- bad input: exit code 2, one line naming the file, the line (or record) and the field


def _fails(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    try:
        code = main(["traces", *argv])
    except SystemExit as exc:  # a usage error found while parsing the options
        code = exc.code
    err = capsys.readouterr().err
    assert code == 2
    assert "Traceback" not in err
    assert len(err.strip().splitlines()) == 1, err
    return err.strip()


def _example_line(i: int) -> str:
    return json.dumps({"id": str(i), "label": i % 2, "group": "g", "tools": []})


def test_bad_input_malformed_json_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(_example_line(0) + "\n" + _example_line(1) + "\n" + '{"id": "2", "label": \n')
    err = _fails(capsys, "inspect", str(path))
    assert f"{path}, line 3: malformed JSON at column" in err


def test_bad_input_missing_required_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "missing.jsonl"
    path.write_text(
        _example_line(0) + "\n" + json.dumps({"id": "1", "group": "g", "tools": []}) + "\n"
    )
    err = _fails(capsys, "inspect", str(path), "--format", "examples")
    assert f"{path}, line 2, field 'label': field required" in err


def test_bad_input_missing_field_in_tau2_names_record(
    shared_data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    doc = json.loads((shared_data / "tau2" / "simulations" / TAU2[0]).read_text())
    del doc["simulations"][3]["task_id"]
    path = tmp_path / "tau2.json"
    path.write_text(json.dumps(doc, indent=2))
    err = _fails(capsys, "inspect", str(path))
    assert f"{path}, field 'simulations[3].task_id': missing required field" in err


def test_bad_input_empty_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "empty.jsonl"
    path.write_text("\n  \n")
    assert _fails(capsys, "inspect", str(path)).endswith(f"{path}: file is empty (no JSON records)")


def test_bad_input_csv_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "data.csv"
    path.write_text("id,label,group\n1,0,a\n")
    err = _fails(capsys, "inspect", str(path))
    assert f"{path}, line 1: unrecognised format: not JSON or JSONL" in err


def test_bad_input_json_of_another_kind(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "other.json"
    path.write_text(json.dumps({"results": [1, 2, 3]}, indent=2))
    err = _fails(capsys, "inspect", str(path))
    assert f"{path}, field 'simulations': unrecognised JSON" in err


def test_bad_input_jsonl_of_another_kind(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "other.jsonl"
    path.write_text(json.dumps({"question": "q", "answer": "a"}) + "\n")
    err = _fails(capsys, "inspect", str(path))
    assert f"{path}, line 1, field 'task_id': unrecognised JSONL record" in err


def test_bad_input_non_utf8_bytes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "latin1.jsonl"
    path.write_bytes((_example_line(0) + "\n").encode() + b'{"id": "caf\xe9"}\n')
    err = _fails(capsys, "inspect", str(path))
    assert f"{path}, line 2: not valid UTF-8" in err


def test_bad_input_non_utf8_in_json_document(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "latin1.json"
    path.write_bytes(b'{\n  "simulations": [],\n  "note": "caf\xe9"\n}\n')
    err = _fails(capsys, "inspect", str(path))
    assert f"{path}, line 3: not valid UTF-8" in err


def test_bad_input_convert_leaves_no_partial_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(_example_line(0) + "\n{oops\n")
    out = tmp_path / "out.jsonl"
    err = _fails(capsys, "convert", str(path), "--out", str(out))
    assert f"{path}, line 2: malformed JSON" in err
    assert list(tmp_path.iterdir()) == [path]


def test_bad_input_unknown_format_option_names_allowed_values(
    tmp_path: Path,
) -> None:
    assert main(["traces", "inspect", str(tmp_path), "--format", "csv"]) == 2


def test_inspect_and_convert_with_mapping(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "runs.jsonl"
    rows = [
        {
            "uid": f"u{i}",
            "meta": {"reward": i / 4},
            "task": {"id": f"t{i % 2}"},
            "tool_outputs": [{"name": "search", "text": f"r{i}"}],
        }
        for i in range(5)
    ]
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    mapping = tmp_path / "mapping.json"
    mapping.write_text(
        json.dumps(
            {
                "id": "uid",
                "label": "meta.reward",
                "label_threshold": 0.5,
                "group": "task.id",
                "tools": "tool_outputs[*].text",
                "tool_names": "tool_outputs[*].name",
            }
        )
    )
    got = _inspect_json(capsys, str(data), "--mapping", str(mapping))
    assert (got["format"], got["episodes"], got["tasks"], got["tool_results"]) == (
        "mapped",
        5,
        2,
        5,
    )
    assert got["mean_reward"] == pytest.approx(3 / 5)  # rewards 0.5, 0.75, 1.0 pass 0.5
    out = tmp_path / "examples.jsonl"
    assert main(["traces", "convert", str(data), "--mapping", str(mapping), "--out", str(out)]) == 0
    assert [e.id for e in load_examples(out) if e.label] == ["u2", "u3", "u4"]


def test_inspect_prints_hostile_tool_names_literally(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from toolaudit.traces import Episode, Message, ToolCall

    names = ["get_[/x]", "[link=http://evil.example]click[/link]", "red\x1b[31mtext", "[bold]b"]
    ep = Episode(
        task_id="t",
        messages=[
            Message(
                role="assistant",
                tool_calls=[ToolCall(id=str(i), name=n) for i, n in enumerate(names)],
            )
        ],
        reward=1.0,
        termination_reason="[red]stop\x07",
    )
    path = tmp_path / "hostile.jsonl"
    write_jsonl(path, [ep])
    assert main(["traces", "inspect", str(path)]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\x07" not in out
    for shown in ("get_[/x]", "[link=http://evil.example]click[/link]", "red\\x1b[31mtext"):
        assert shown in out.replace("\n", ""), shown
    assert "[bold]b" in out and "[red]stop\\x07" in out


def test_convert_out_folder_is_refused_without_partial_file(
    shared_data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src = shared_data / "tau2" / "simulations" / TAU2[0]
    out = tmp_path / "outdir"
    out.mkdir()
    err = _fails(capsys, "convert", str(src), "--out", str(out))
    assert "--out" in err and str(out) in err and "folder" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["outdir"]
    missing = tmp_path / "nope" / "x.jsonl"
    err = _fails(capsys, "convert", str(src), "--out", str(missing))
    assert "allowed: a file in an existing folder" in err

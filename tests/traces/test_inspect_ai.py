"""Inspect AI logs (.eval and .json) written by inspect_ai itself on its mock model,
read into Episodes and checked against counts taken from the raw files without
inspect_ai (zip + JSON)."""

from __future__ import annotations

import json
import shutil
import sys
import zipfile
from pathlib import Path

import pytest

pytest.importorskip("inspect_ai")
# inspect_ai's own retry settings raise a DeprecationWarning from tenacity on every run.
pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

from tests.traces._counts import inspect_counts  # noqa: E402
from tests.traces._inspect_logs import EPOCHS, MESSAGE_LIMIT, write_logs  # noqa: E402
from toolaudit.cli.main import main  # noqa: E402
from toolaudit.errors import MissingDependencyError, TraceFormatError  # noqa: E402
from toolaudit.traces import detect_format, load_episodes, load_examples  # noqa: E402


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return write_logs(tmp_path_factory.mktemp("inspect-logs"))


def _inspect_json(capsys: pytest.CaptureFixture[str], path: Path) -> dict:
    assert main(["traces", "inspect", str(path), "--json"]) == 0
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("which", ["a", "a_json", "b"])
def test_inspect_log_counts_match_raw_files(
    logs: dict[str, Path], capsys: pytest.CaptureFixture[str], which: str
) -> None:
    path = logs[which]
    want = inspect_counts(path)
    got = _inspect_json(capsys, path)
    assert got["format"] == "inspect"
    for key in ("episodes", "tasks", "tool_calls", "tool_results", "tool_errors"):
        assert got[key] == want[key], key
    assert got["mean_reward"] == pytest.approx(want["mean_reward"])
    assert want["epochs"] == list(range(1, EPOCHS + 1))


def test_inspect_log_a_has_the_designed_runs(logs: dict[str, Path]) -> None:
    eps = list(load_episodes(logs["a"]))
    assert sorted((e.task_id, e.trial) for e in eps) == [
        (s, k) for s in ("s1", "s2", "s3") for k in (1, 2, 3)
    ]
    first = next(m for m in eps[0].messages if m.tool_calls)
    assert [c.name for c in first.tool_calls or []] == ["lookup", "add"]  # two calls, one turn
    s2 = next(e for e in eps if e.task_id == "s2")
    failed = [m for m in s2.tool_results() if m.error]
    assert len(failed) == 1 and failed[0].content == "no such key: delta"
    assert failed[0].name == "lookup" and failed[0].tool_call_id == "c1"
    names = {c.id: c.name for c in s2.tool_calls()}
    assert all(names[m.tool_call_id or ""] == m.name for m in s2.tool_results())
    assert {e.task_id: e.reward for e in eps} == {"s1": 1.0, "s2": 1.0, "s3": 0.0}
    assert all(e.termination_reason is None for e in eps)
    assert eps[0].source["task"] == "a" and eps[0].source["model"] == "mockllm/model"


def test_inspect_json_and_eval_give_the_same_episodes(logs: dict[str, Path]) -> None:
    def strip(path: Path) -> list[dict]:
        return [e.model_dump(exclude={"source"}) for e in load_episodes(path)]

    assert detect_format(logs["a_json"]) == detect_format(logs["a"]) == "inspect"
    assert sorted(strip(logs["a_json"]), key=str) == sorted(strip(logs["a"]), key=str)


def test_inspect_termination_from_sample_errors_and_limits(logs: dict[str, Path]) -> None:
    eps = list(load_episodes(logs["b"]))
    ends = {(e.task_id, e.termination_reason) for e in eps}
    assert ends == {("s1", None), ("s2", "error"), ("s3", "message_limit")}
    crashed = [e for e in eps if e.task_id == "s2"]
    assert all(e.reward is None and "tool crashed" in e.source["error"] for e in crashed)
    limited = [e for e in eps if e.task_id == "s3"]
    assert all(len(e.messages) == MESSAGE_LIMIT for e in limited)


def test_inspect_log_converts_to_examples_for_leakage(logs: dict[str, Path]) -> None:
    exs = list(load_examples(logs["a"]))
    assert len(exs) == 9 and sum(e.label for e in exs) == 6
    assert {t.name for e in exs for t in e.tools} == {"lookup", "add"}


def test_probe_compare_and_reruns_on_two_inspect_logs(
    logs: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["probe", "compare", str(logs["a"]), str(logs["b"]), "--json"]) == 0
    got = json.loads(capsys.readouterr().out)
    # s2 has no reward in b (sample error), so s1 and s3 are paired; both agree.
    assert got["paired_tasks"] == 2
    assert got["b"]["unrewarded_runs"] == EPOCHS
    assert got["mean_reward_a"] == pytest.approx(0.5)
    assert got["delta"] == pytest.approx(0.0)
    assert main(["probe", "reruns", str(logs["a"]), "--json"]) == 0
    reruns = json.loads(capsys.readouterr().out)
    assert reruns["flip_rate"] == 0.0 and reruns["n_pairs"] == 3 * 3


# --- bad input: exit 2, one line naming the file, the record and the field


def _fails(capsys: pytest.CaptureFixture[str], path: Path) -> str:
    code = main(["traces", "inspect", str(path)])
    err = capsys.readouterr().err
    assert code == 2
    assert "Traceback" not in err
    assert len(err.strip().splitlines()) == 1, err
    return err.strip()


def test_inspect_truncated_eval_archive_exits_2(
    logs: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "cut.eval"
    bad.write_bytes(logs["a"].read_bytes()[:20000])
    err = _fails(capsys, bad)
    assert f"{bad}: truncated or corrupt .eval archive" in err


def test_inspect_truncated_json_log_exits_2(
    logs: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "cut.json"
    bad.write_bytes(logs["a_json"].read_bytes()[:100000])
    err = _fails(capsys, bad)
    assert f"{bad}, field 'samples[" in err and "malformed JSON" in err


def _rewrite_eval(src: Path, dest: Path, entry: str, edit: object) -> None:
    import zipfile_zstd  # noqa: F401  (lets zipfile read Inspect's zstd entries)

    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dest, "w", zipfile.ZIP_DEFLATED) as zout:
        for info in zin.infolist():
            data = zin.read(info.filename)
            if info.filename == entry:
                obj = json.loads(data)
                edit(obj)  # type: ignore[operator]
                data = json.dumps(obj).encode()
            zout.writestr(info.filename, data)


def test_inspect_malformed_sample_names_sample_epoch_and_field(
    logs: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    def bad_role(sample: dict) -> None:
        sample["messages"][2]["role"] = "robot"

    bad = tmp_path / "bad.eval"
    _rewrite_eval(logs["a"], bad, "samples/s2_epoch_2.json", bad_role)
    err = _fails(capsys, bad)
    assert f"{bad}, field 'samples[id=s2, epoch=2].messages.2.role'" in err
    doc = json.loads(logs["a_json"].read_text())
    bad_role(doc["samples"][4])
    bad_json = tmp_path / "bad.json"
    bad_json.write_text(json.dumps(doc, indent=2))
    sid, epoch = doc["samples"][4]["id"], doc["samples"][4]["epoch"]
    err = _fails(capsys, bad_json)
    assert f"{bad_json}, field 'samples[id={sid}, epoch={epoch}].messages.2.role'" in err


def test_inspect_missing_dependency_names_the_extra(
    logs: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    copy = tmp_path / "a.eval"
    shutil.copy(logs["a"], copy)
    monkeypatch.setitem(sys.modules, "inspect_ai", None)
    with pytest.raises(MissingDependencyError, match=r"pip install 'toolaudit\[inspect\]'"):
        list(load_episodes(copy))
    assert detect_format(copy) == "inspect"  # detection needs no inspect_ai


def test_inspect_eval_suffix_on_garbage_is_bad_input(tmp_path: Path) -> None:
    bad = tmp_path / "notes.eval"
    bad.write_text("not a zip")
    with pytest.raises(TraceFormatError, match="truncated or corrupt .eval archive"):
        list(load_episodes(bad))


def test_inspect_json_log_with_nan_is_read_whole(
    logs: dict[str, Path], tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    doc = json.loads(logs["a_json"].read_text())
    doc["samples"][3]["metadata"]["ratio"] = float("nan")  # Python writes NaN; ijson cannot
    path = tmp_path / "nan.json"
    path.write_text(json.dumps(doc, indent=2))
    assert "NaN" in path.read_text()
    eps = list(load_episodes(path))
    want = [e.model_dump(exclude={"source"}) for e in load_episodes(logs["a_json"])]
    assert [e.model_dump(exclude={"source"}) for e in eps] == want
    assert "samples[3] cannot be streamed" in caplog.text


def test_inspect_non_finite_score_names_the_sample_and_scorer(
    logs: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    doc = json.loads(logs["a_json"].read_text())
    doc["samples"][1]["scores"]["includes"]["value"] = float("nan")
    sid, epoch = doc["samples"][1]["id"], doc["samples"][1]["epoch"]
    bad = tmp_path / "nan_score.json"
    bad.write_text(json.dumps(doc, indent=2))
    err = _fails(capsys, bad)
    assert f"{bad}, field 'samples[id={sid}, epoch={epoch}].scores.includes'" in err
    assert "nan is not a finite number" in err


def test_inspect_samples_that_are_not_a_list_are_refused(
    logs: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    doc = json.loads(logs["a_json"].read_text())
    doc["samples"] = {}  # would otherwise read as a log with no samples
    bad = tmp_path / "samples_object.json"
    bad.write_text(json.dumps(doc, indent=2))
    err = _fails(capsys, bad)
    assert f"{bad}, field 'samples': expected a list, got an object" in err

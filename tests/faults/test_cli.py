"""The faults command's bad-input paths (no model is loaded: every check runs first)."""

from __future__ import annotations

import json

import pytest

from toolaudit.cli.main import main
from toolaudit.errors import ConfigError, TraceFormatError
from toolaudit.faults import FaultsConfig
from toolaudit.faults._run import check_resume, read_done


def _run(tmp_path, *extra):
    return main(["faults", "run", "--out", str(tmp_path / "o"), *extra])


@pytest.mark.parametrize(
    ("extra", "needle"),
    [
        (["--data-root", "/typo"], "--data-root /typo"),
        (["--tasks", "0"], "tasks=0"),
        (["--tasks", "-1"], "tasks=-1"),
        (["--arms", "clean", "bogus"], "arms"),
        (["--arms", "failed"], "includes 'clean'"),
        (["--k-max", "11"], "invalid k-max=11"),
        (["--source", "/no/such.json"], "no such file"),
        (["--task-ids", "9999"], "task_ids"),
        (["--task-ids", "69"], "does not qualify"),
    ],
)
def test_cli_bad_input_exits_2_with_one_line_and_writes_nothing(
    tmp_path, capsys, shared_data, extra, needle
):
    args = extra if "--data-root" in extra else [*extra, "--data-root", str(shared_data)]
    assert _run(tmp_path, *args) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and needle in err[0] and "Traceback" not in err[0]
    assert not (tmp_path / "o").exists()  # a failed run leaves --out free


def test_cli_source_folder_and_non_utf8_file(tmp_path, capsys, shared_data):
    assert _run(tmp_path, "--source", str(tmp_path), "--data-root", str(shared_data)) == 2
    assert "not a folder" in capsys.readouterr().err
    bad = tmp_path / "bad.json"
    bad.write_bytes(b"\xff\xfe{}")
    assert _run(tmp_path, "--source", str(bad), "--data-root", str(shared_data)) == 2
    err = capsys.readouterr().err.strip()
    assert "bad.json, line 1" in err and "UTF-8" in err


def test_cli_source_example_jsonl_says_what_it_holds(tmp_path, capsys, shared_data):
    path = tmp_path / "ex.jsonl"
    path.write_text(json.dumps({"id": "a", "label": 1, "group": "g", "tools": []}) + "\n")
    assert _run(tmp_path, "--source", str(path), "--data-root", str(shared_data)) == 2
    err = capsys.readouterr().err.strip()
    assert "not agent episodes" in err and len(err.splitlines()) == 1


def test_resume_with_other_options_names_the_option(tmp_path):
    out = tmp_path / "o"
    out.mkdir()
    first = FaultsConfig(data_root="/data", arms=("clean", "failed"))
    (out / "run_config.json").write_text(json.dumps(first.result_options()))
    check_resume(out, first.result_options())  # same options: fine
    # more tasks is not a different configuration
    check_resume(
        out, FaultsConfig(data_root="/data", arms=("clean", "failed"), tasks=9).result_options()
    )
    for other, flag in [
        (FaultsConfig(data_root="/other", arms=("clean", "failed")), "--data-root"),
        (FaultsConfig(data_root="/data", arms=("clean",)), "--arms"),
        (FaultsConfig(data_root="/data", arms=("clean", "failed"), model="hf:x"), "--model"),
        (FaultsConfig(data_root="/data", arms=("clean", "failed"), domain="mini"), "--domain"),
    ]:
        with pytest.raises(ConfigError, match=flag):
            check_resume(out, other.result_options())


def test_out_that_is_a_file_is_refused(tmp_path):
    path = tmp_path / "f"
    path.write_text("x")
    with pytest.raises(ConfigError, match="out"):
        check_resume(path, FaultsConfig().result_options())


def test_truncated_last_line_is_dropped_and_the_file_repaired(tmp_path):
    path = tmp_path / "rows.jsonl"
    good = json.dumps({"task": "1", "status": "ok", "rows": []})
    path.write_text(good + "\n" + good[:15])
    done = read_done(path)
    assert list(done) == ["1"] and path.read_text() == good + "\n"
    path.write_text(good + "\n{not json}\n")
    with pytest.raises(TraceFormatError, match="line 2"):
        read_done(path)

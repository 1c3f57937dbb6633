"""A faults run folder is never misread or altered silently: a complete last record is
read, a repeated or foreign record is refused naming both lines, a damaged run file is
refused in one line, and a refused run writes nothing (issue 43).

The folder is written once by a tiny in-memory model (seconds); every case copies it.
The recorded model spec points nowhere, so a check that failed to refuse a `faults run`
would stop at once on the model instead of loading one.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from toolaudit.cli.main import main
from toolaudit.faults import FaultsConfig
from toolaudit.faults._run import RUN_STAMP, run_faults

NO_MODEL = "hf:/nonexistent/toolaudit-model"
RUN = ["--domain", "mini", "--arms", "clean", "failed", "--k-max", "0", "--tasks", "2",
       "--model", NO_MODEL]  # fmt: skip


@pytest.fixture(scope="module")
def study(tiny_lm, tmp_path_factory: pytest.TempPathFactory, shared_data: Path) -> Path:
    out = tmp_path_factory.mktemp("faults-study") / "run"
    config = FaultsConfig(domain="mini", arms=("clean", "failed"), k_max=0, tasks=2,
                          model=NO_MODEL, data_root=str(shared_data.resolve()))  # fmt: skip
    run_faults(out, config=config, model=tiny_lm)
    return out


@pytest.fixture
def folder(study: Path, tmp_path: Path) -> Path:
    dst = tmp_path / "copy"
    shutil.copytree(study, dst)
    return dst


def _files(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}


def _error(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    """The one stderr line of a refused command (exit 2)."""
    try:
        code = main(argv)
    except SystemExit as exc:
        code = int(exc.code or 0)
    lines = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(lines) == 1, (code, lines)
    assert lines[0].startswith("toolaudit: error: ")
    return lines[0]


def _run(folder: Path, shared_data: Path) -> list[str]:
    return ["faults", "run", "--out", str(folder), *RUN, "--data-root", str(shared_data)]


def test_analyze_reads_a_last_record_that_lacks_its_newline(
    folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = folder / "rows.jsonl"
    rows.write_bytes(rows.read_bytes().rstrip(b"\n"))
    before = rows.read_bytes()
    assert main(["faults", "analyze", str(folder), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["counts"]["tasks_scored"] == 2
    assert rows.read_bytes() == before  # a reader changes nothing


def test_analyze_refuses_a_truncated_last_record_without_changing_the_file(
    folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = folder / "rows.jsonl"
    rows.write_bytes(rows.read_bytes() + b'{"task": "9", "ro')
    before = rows.read_bytes()
    err = _error(["faults", "analyze", str(folder)], capsys)
    assert "rows.jsonl, line 3" in err and "truncated" in err
    assert rows.read_bytes() == before


def test_a_repeated_record_is_refused_naming_both_lines(
    folder: Path, shared_data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = folder / "rows.jsonl"
    first = rows.read_text().splitlines()[0]
    rows.write_text(rows.read_text() + first + "\n")
    before = _files(folder)
    err = _error(["faults", "analyze", str(folder)], capsys)
    assert "rows.jsonl, line 3, field 'task'" in err and "repeats the record of line 1" in err
    err = _error(_run(folder, shared_data), capsys)  # a resume is refused the same way
    assert "line 3" in err and "line 1" in err
    assert _files(folder) == before


def test_a_record_of_another_study_is_refused_naming_both_lines(
    folder: Path, shared_data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = folder / "rows.jsonl"
    lines = rows.read_text().splitlines()
    other = json.loads(lines[1])
    other[RUN_STAMP] = "0123456789abcdef"  # the stamp of a run with other options
    rows.write_text(lines[0] + "\n" + json.dumps(other) + "\n")
    before = _files(folder)
    err = _error(["faults", "analyze", str(folder)], capsys)
    assert f"line 2, field '{RUN_STAMP}'" in err and "line 1" in err and "another study" in err
    assert "line 2" in _error(_run(folder, shared_data), capsys)
    assert _files(folder) == before


@pytest.mark.parametrize(
    ("name", "content", "expect"),
    [
        ("run_config.json", "[1, 2]\n", "run_config.json: run record is not a JSON object"),
        ("census.json", "{}\n", "census.json, field 'tasks'"),
        ("census.json", "", "census.json: not valid JSON"),
        ("census.json", '{"tasks": 0, "qualifying": [], "dropped": [], "site_dropouts": {}}',
         "empty census"),
        ("rows.jsonl", '{"task": "1", "status": "ok"}\n', "rows.jsonl, line 1, field 'rows'"),
        ("rows.jsonl", '{"task": "1", "rows": [{"arm": "clean"}]}\n', "field 'rows[0].k'"),
        ("rows.jsonl", "[" * 100_000 + "\n", "rows.jsonl, line 1: nested too deeply"),
    ],
)  # fmt: skip
def test_analyze_refuses_damaged_run_files_in_one_line(
    folder: Path, name: str, content: str, expect: str, capsys: pytest.CaptureFixture[str]
) -> None:
    (folder / name).write_text(content)
    before = _files(folder)
    assert expect in _error(["faults", "analyze", str(folder)], capsys)
    assert _files(folder) == before


def test_analyze_refuses_a_read_only_folder_before_any_work(
    folder: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import tempfile

    def read_only(*args: object, **kwargs: object) -> str:
        raise OSError(30, "Read-only file system")

    # permission bits do not stop root, so the file system's answer is simulated
    monkeypatch.setattr(tempfile, "mkdtemp", read_only)
    err = _error(["faults", "analyze", str(folder)], capsys)
    assert str(folder) in err and "Read-only file system" in err


def test_rows_without_their_run_config_are_not_resumed_under_new_options(
    folder: Path, shared_data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (folder / "run_config.json").unlink()
    before = _files(folder)
    err = _error([*_run(folder, shared_data), "--seed", "3"], capsys)
    assert "holds rows" in err and "no run_config.json" in err and "start over" in err
    assert _files(folder) == before


def test_the_start_over_advice_never_mixes_options(
    folder: Path, shared_data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    err = _error([*_run(folder, shared_data), "--seed", "3"], capsys)
    assert f"error: {folder} holds a run made with --seed=0" in err
    assert "delete that folder to start over" in err  # the folder, not run_config.json
    assert "delete" not in err.split("delete that folder")[0]


def test_a_run_that_fails_on_its_model_leaves_no_folder(
    tmp_path: Path, shared_data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "new"
    assert "no such model folder" in _error(_run(out, shared_data), capsys)
    assert not out.exists()

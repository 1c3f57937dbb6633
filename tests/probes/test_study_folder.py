"""A probe study folder is never misread or altered silently (issue 43): a complete last
record is read, a repeated record or one of another study is refused naming both lines,
a NaN or absurd reward is refused naming the record, a damaged run file is refused in
one line, and a refused run writes nothing. The study is the scripted suite on two tasks
and one seed (about a second)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from toolaudit.cli.main import main

RUN = ["--seeds", "1", "--tasks", "2", "--no-analyze"]


@pytest.fixture(scope="module")
def study(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("probe-study") / "run"
    assert main(["-q", "probe", "run", "--out", str(out), *RUN]) == 0
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
    lines = [ln for ln in capsys.readouterr().err.strip().splitlines() if ln]
    assert code == 2 and len(lines) == 1, (code, lines)
    assert lines[0].startswith("toolaudit: error: ")
    return lines[0]


def _edit(folder: Path, line: int, **changes: object) -> None:
    """Change fields of one record (``source__policy`` reaches into ``source``)."""
    path = folder / "records.jsonl"
    lines = path.read_text().splitlines()
    rec = json.loads(lines[line - 1])
    for key, value in changes.items():
        target = rec
        *parents, leaf = key.split("__")
        for p in parents:
            target = target[p]
        target[leaf] = value
    lines[line - 1] = json.dumps(rec)
    path.write_text("\n".join(lines) + "\n")


def _analyze(folder: Path) -> list[str]:
    return ["probe", "analyze", str(folder), "--n-boot", "20"]


def test_a_last_record_without_its_newline_is_read_and_kept(
    folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    records = folder / "records.jsonl"
    n = len(records.read_text().splitlines())
    records.write_bytes(records.read_bytes().rstrip(b"\n"))
    assert main(["-q", *_analyze(folder), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["records"] == n
    assert main(["-q", "probe", "run", "--out", str(folder), *RUN]) == 0  # resumes: nothing lost
    assert len(records.read_text().splitlines()) == n and records.read_bytes().endswith(b"\n")


def test_a_repeated_record_is_refused_naming_both_lines(
    folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    records = folder / "records.jsonl"
    lines = records.read_text().splitlines()
    records.write_text(records.read_text() + lines[4] + "\n")
    before = _files(folder)
    err = _error(_analyze(folder), capsys)
    assert f"line {len(lines) + 1}, field 'source.config_hash'" in err
    assert "repeats the record of line 5" in err
    err = _error(["probe", "run", "--out", str(folder), *RUN], capsys)
    assert "repeats the record of line 5" in err
    assert _files(folder) == before


def test_a_record_of_another_study_is_refused_naming_both_lines(
    folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _edit(folder, 3, source__base_seed=7, source__config_hash="0123456789abcdef")
    before = _files(folder)
    err = _error(_analyze(folder), capsys)
    assert "line 3, field 'source.base_seed'" in err and "line 1 is one of this study's" in err
    err = _error(["probe", "run", "--out", str(folder), *RUN], capsys)
    assert "line 3" in err and "line 1 is one of them" in err and "another study" in err
    assert _files(folder) == before


def test_starting_over_without_run_config_never_mixes_options(
    folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Deleting run_config.json (the old advice) and running with other options is
    refused: the old records are none of the new study's runs."""
    (folder / "run_config.json").unlink()
    before = _files(folder)
    err = _error(["probe", "run", "--out", str(folder), *RUN, "--policies", "careful"], capsys)
    assert "none of this study's runs" in err
    assert _files(folder) == before


def test_the_start_over_advice_is_the_whole_folder(
    folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    err = _error(["probe", "run", "--out", str(folder), *RUN[:-3], "--tasks", "3"], capsys)
    assert f"error: {folder} holds a run made with --tasks" in err
    assert "delete that folder to start over" in err


@pytest.mark.parametrize(
    ("value", "expect"),
    [(float("nan"), "nan is not a finite number"), (1e30, "1e+30 is no score")],
)
def test_a_nan_or_absurd_reward_is_refused_naming_the_record(
    folder: Path, value: float, expect: str, capsys: pytest.CaptureFixture[str]
) -> None:
    _edit(folder, 4, reward=value)
    err = _error(_analyze(folder), capsys)
    assert "records.jsonl, line 4, field 'reward'" in err and expect in err
    _edit(folder, 4, reward=0.5, source__true_quality=value)
    assert "line 4, field 'source.true_quality'" in _error(_analyze(folder), capsys)


@pytest.mark.parametrize(
    ("name", "content", "expect"),
    [
        ("run_config.json", "[]\n", "run_config.json: run record is not a JSON object"),
        ("records.jsonl", "[" * 100_000 + "\n", "records.jsonl, line 1"),
    ],
)
def test_damaged_study_files_are_refused_in_one_line(
    folder: Path, name: str, content: str, expect: str, capsys: pytest.CaptureFixture[str]
) -> None:
    (folder / name).write_text(content)
    before = _files(folder)
    assert expect in _error(_analyze(folder), capsys)
    assert expect in _error(["probe", "run", "--out", str(folder), *RUN], capsys)
    assert _files(folder) == before


def test_an_empty_records_file_is_no_study(
    folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (folder / "records.jsonl").write_text("")
    assert "records.jsonl: file is empty" in _error(_analyze(folder), capsys)


def test_analyze_refuses_a_read_only_folder_before_any_work(
    folder: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import tempfile

    def read_only(*args: object, **kwargs: object) -> str:
        raise OSError(30, "Read-only file system")

    monkeypatch.setattr(tempfile, "mkdtemp", read_only)  # root ignores permission bits
    err = _error(_analyze(folder), capsys)
    assert str(folder) in err and "Read-only file system" in err

"""Redaction runs that refuse to mix: the output folder records the options that change
the results, a rerun with other options is refused before anything is written, and an
interrupted-then-resumed run writes the same bytes as an uninterrupted one."""

from __future__ import annotations

import gc
import json
import re
from pathlib import Path

import pytest

from toolaudit.cli.main import main

RESULTS = ("redaction.json", "scores.jsonl", "report.md", "report.html", "run_config.json")


@pytest.fixture
def tcr(frozen_tcr: Path) -> Path:
    return frozen_tcr


def _argv(tcr: Path, out: Path, *extra: str) -> list[str]:
    return ["redact", str(tcr), "--out", str(out), "--model", f"sklearn:{tcr / 'frozen.joblib'}",
            "--limit", "10", "--n-boot", "20", "--class", "pdb_id", *extra]  # fmt: skip


def _snapshot(folder: Path) -> dict[str, bytes]:
    gc.collect()  # close the finished run's SQLite connection (its WAL checkpoint)
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}


def test_redact_rerun_is_byte_identical_and_counts_calls_outside_results(
    tcr: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "red"
    assert main(_argv(tcr, out, "--json")) == 0
    first = json.loads(capsys.readouterr().out)
    assert first["run"]["calls"] == {"made": 10 * 2 * 10, "cached": 0}
    assert first["calls"] == {"requests": 10 * 2 * 10}
    before = {n: (out / n).read_bytes() for n in RESULTS}
    assert main(_argv(tcr, out, "--json")) == 0
    again = json.loads(capsys.readouterr().out)
    assert again["run"]["calls"] == {"made": 0, "cached": 10 * 2 * 10}
    assert {n: (out / n).read_bytes() for n in RESULTS} == before
    log = [json.loads(line) for line in (out / "run_log.jsonl").read_text().splitlines()]
    assert [e["calls"]["made"] for e in log] == [200, 0]
    recorded = json.loads((out / "run_config.json").read_text())
    assert recorded["model"].startswith("sklearn:") and recorded["scoring"] == "options"
    assert [c["name"] for c in recorded["classes"]] == ["pdb_id"]


MISMATCHES = [
    (["--scoring", "yesno"], "scoring"),
    (["--class", "peptide"], "classes"),
    (["--seed", "3"], "seed"),
    (["--n-boot", "21"], "n_boot"),
    (["--chat"], "chat"),
    (["--eval", "split=train"], "eval"),
]


def test_redact_resume_with_other_options_is_refused_before_writing(
    tcr: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "red"
    assert main(_argv(tcr, out)) == 0
    capsys.readouterr()
    before = _snapshot(out)
    for extra, option in MISMATCHES:
        assert main(_argv(tcr, out, *extra)) == 2, extra
        err = capsys.readouterr().err.strip().splitlines()
        # the option, or the first differing entry inside it (eval.split[0]=...)
        assert len(err) == 1 and re.search(rf"with {option}[=.\[]", err[0]), err
        assert "another --out" in err[0] and "delete that folder to start over" in err[0]
        assert len(err[0].replace(str(out), "DIR")) <= 240, err[0]  # short values only
        assert _snapshot(out) == before  # nothing written: results, cache and log alike
    other = tmp_path / "other.joblib"
    other.write_bytes((tcr / "frozen.joblib").read_bytes())
    argv = _argv(tcr, out)
    argv[argv.index("--model") + 1] = f"sklearn:{other}"
    assert main(argv) == 2
    assert 'with model="sklearn:' in capsys.readouterr().err
    assert _snapshot(out) == before


def test_redact_failed_start_does_not_lock_the_folder(
    tcr: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "red"
    assert main(_argv(tcr, out, "--class", "nosuch")) == 2
    assert not (out / "run_config.json").exists()
    assert main(_argv(tcr, out)) == 0


def test_redact_interrupted_then_resumed_equals_uninterrupted(
    tcr: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import toolaudit.redaction._audit as audit

    whole = tmp_path / "whole"
    assert main(_argv(tcr, whole)) == 0
    real = audit.score_rows
    calls = {"n": 0}

    def interrupted(*args: object, **kwargs: object) -> object:
        calls["n"] += 1
        if calls["n"] == 2:  # after the original rows, before the redacted variant
            raise KeyboardInterrupt
        return real(*args, **kwargs)  # type: ignore[arg-type]

    capsys.readouterr()
    resumed = tmp_path / "resumed"
    monkeypatch.setattr(audit, "score_rows", interrupted)
    assert main(_argv(tcr, resumed)) == 130
    assert not (resumed / "redaction.json").exists()
    monkeypatch.setattr(audit, "score_rows", real)
    assert main(_argv(tcr, resumed, "--json")) == 0
    assert json.loads(capsys.readouterr().out)["run"]["calls"] == {"made": 100, "cached": 100}
    for name in RESULTS:
        assert (resumed / name).read_bytes() == (whole / name).read_bytes(), name


def test_a_second_run_into_a_folder_being_written_is_refused(
    tcr: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Two runs into one folder would append their records side by side: while one
    holds the folder's lock, a second is refused in one line and writes nothing."""
    from toolaudit.errors import ConfigError
    from toolaudit.runs import exclusive

    out = tmp_path / "red"
    with exclusive(out):
        with pytest.raises(ConfigError, match="another toolaudit run is writing"):
            with exclusive(out):
                pass
        before = _snapshot(out)
        assert main(_argv(tcr, out)) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and "another toolaudit run is writing into this folder" in err[0]
        assert _snapshot(out) == before
    assert main(_argv(tcr, out)) == 0  # released: the run goes ahead

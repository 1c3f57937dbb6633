"""Hostile tau2 layouts and numbers (issue 43): a link loop, a FIFO or a device where a
results or simulation file belongs, a folder without an index whose file links outside
it, an index id with a NUL byte or a name too long for the file system, and rewards of
5,000 digits or 1e30. Each is refused in one line naming the file (and field), exit 2,
before anything is read from a FIFO or a device, and ``faults run --source`` refuses
them before its model loads and without writing to ``--out``."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import pytest

from tests.traces._layouts import save_dir
from toolaudit.cli.main import main
from toolaudit.errors import TraceFormatError
from toolaudit.traces import load_episodes
from toolaudit.traces._numbers import HugeNumber, check_score, parse_int

SIMS = "tau2/simulations/airline__gpt-4.1__user-gpt-4.1__test20x1.json"
NO_MODEL = "hf:/nonexistent/toolaudit-model"


@pytest.fixture(scope="module")
def src(shared_data: Path) -> Path:
    return shared_data / SIMS


def _refused(capsys: pytest.CaptureFixture[str], argv: list[str]) -> str:
    """Run the CLI, expect exit 2 with exactly one line on stderr, and return it."""
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    assert err.startswith("toolaudit: error: ")
    return err


def _first_sim_file(folder: Path) -> Path:
    return sorted((folder / "simulations").glob("*.json"))[0]


def test_tau2_input_symlink_loop_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    loop = tmp_path / "loop.json"
    loop.symlink_to(loop.name)
    err = _refused(capsys, ["traces", "inspect", str(loop)])
    assert "loop.json: a symbolic link loop" in err
    with pytest.raises(TraceFormatError, match="symbolic link loop"):
        list(load_episodes(loop))


def test_tau2_fifo_input_is_refused_without_blocking(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    fifo = tmp_path / "results.json"
    os.mkfifo(fifo)
    start = time.monotonic()
    err = _refused(capsys, ["traces", "inspect", str(fifo)])
    assert "results.json: a FIFO (named pipe), not a regular file" in err
    for fmt in ("tau2", "episodes", "tau-bench"):  # an explicit format opens no FIFO either
        with pytest.raises(TraceFormatError, match="FIFO"):
            list(load_episodes(fifo, format=fmt))
    assert time.monotonic() - start < 5


def test_tau2_device_input_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    link = tmp_path / "zero.json"
    link.symlink_to("/dev/zero")
    err = _refused(capsys, ["traces", "inspect", str(link)])
    assert "/dev/zero: a character device, not a regular file" in err  # the link resolved


@pytest.mark.parametrize("index", [True, False], ids=["indexed", "no-index"])
@pytest.mark.parametrize("kind", ["fifo", "device", "loop"])
def test_tau2_dir_simulation_file_that_is_no_regular_file_is_refused(
    src: Path, tmp_path: Path, capsys: pytest.CaptureFixture, kind: str, index: bool
) -> None:
    folder = save_dir(src, tmp_path / "run", index=index)
    sim = _first_sim_file(folder)
    sim.unlink()
    if kind == "fifo":
        os.mkfifo(sim)
    elif kind == "device":
        sim.symlink_to("/dev/zero")
    else:
        sim.symlink_to(sim.name)
    err = _refused(capsys, ["traces", "inspect", str(folder)])
    if kind == "device":  # a link to /dev/zero leads outside the folder: never followed
        assert "outside simulations/" in err
    else:
        want = {"fifo": "a FIFO (named pipe), not a regular file", "loop": "a symbolic link loop"}
        assert f"{sim}: {want[kind]}" in err


def test_tau2_dir_without_index_does_not_follow_links_outside(
    src: Path, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    folder = save_dir(src, tmp_path / "run", index=False)
    sim = _first_sim_file(folder)
    outside = tmp_path / "elsewhere.json"
    outside.write_text(sim.read_text())
    sim.unlink()
    sim.symlink_to(outside)
    err = _refused(capsys, ["traces", "inspect", str(folder)])
    assert f"{sim}: a link leading outside simulations/, not read" in err


@pytest.mark.parametrize(
    ("bad", "problem"),
    [("a\x00b", "a NUL byte in the id"), ("x" * 300, "would be over 255 bytes")],
    ids=["nul", "too-long"],
)
def test_tau2_dir_index_id_unusable_as_file_name_is_refused(
    src: Path, tmp_path: Path, capsys: pytest.CaptureFixture, bad: str, problem: str
) -> None:
    folder = save_dir(src, tmp_path / "run")
    meta = json.loads((folder / "results.json").read_text())
    meta["simulation_index"][0]["id"] = bad
    (folder / "results.json").write_text(json.dumps(meta))
    err = _refused(capsys, ["traces", "inspect", str(folder)])
    assert "results.json, field 'simulation_index[0].id': " in err
    assert problem in err


def _with_reward(src: Path, dest: Path, literal: str) -> Path:
    doc: dict[str, Any] = json.loads(src.read_text())
    doc["simulations"][0]["reward_info"]["reward"] = 424242
    dest.write_text(json.dumps(doc).replace("424242", literal, 1))
    return dest


@pytest.mark.parametrize(
    ("literal", "problem"),
    [
        ("1" * 5000, "a 5,000-digit integer is too long to be a number here"),
        ("-1" + "0" * 4999, "a 5,000-digit integer is too long to be a number here"),
        ("1e30", "1e+30 is no score (beyond ±1e+06)"),
        ("1e400", "inf is not a finite number"),
    ],
    ids=["5000-digits", "negative-5000-digits", "1e30", "overflow"],
)
def test_tau2_absurd_reward_is_refused_naming_the_field(
    src: Path, tmp_path: Path, capsys: pytest.CaptureFixture, literal: str, problem: str
) -> None:
    path = _with_reward(src, tmp_path / "run.json", literal)
    err = _refused(capsys, ["traces", "inspect", str(path)])
    assert "run.json, field 'simulations[0].reward_info.reward': " + problem in err


def test_tau2_dir_absurd_reward_is_refused_in_its_simulation_file(
    src: Path, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    folder = save_dir(src, tmp_path / "run")
    sim = _first_sim_file(folder)
    doc = json.loads(sim.read_text())
    doc["reward_info"]["reward"] = 1e30
    sim.write_text(json.dumps(doc))
    err = _refused(capsys, ["traces", "inspect", str(folder)])
    assert f"{sim}, field 'reward_info.reward': 1e+30 is no score" in err


@pytest.mark.parametrize("literal", ["1" * 5000, "1e30"], ids=["5000-digits", "1e30"])
def test_episode_jsonl_absurd_reward_is_refused_naming_line(
    src: Path, tmp_path: Path, capsys: pytest.CaptureFixture, literal: str
) -> None:
    episodes = tmp_path / "episodes.jsonl"
    eps = list(load_episodes(src))[:3]
    lines = [ep.model_dump_json() for ep in eps]
    lines[1] = json.dumps({**json.loads(lines[1]), "reward": 424242}).replace("424242", literal, 1)
    episodes.write_text("\n".join(lines) + "\n")
    err = _refused(capsys, ["traces", "inspect", str(episodes)])
    assert "episodes.jsonl, line 2, field 'reward': " in err


def test_taubench_absurd_reward_is_refused(
    shared_data: Path, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    src = next((shared_data / "tau-bench").rglob("*.json"))
    doc = json.loads(src.read_text())
    doc[0]["reward"] = -1e30
    path = tmp_path / "taubench.json"
    path.write_text(json.dumps(doc))
    err = _refused(capsys, ["traces", "inspect", str(path)])
    assert "taubench.json, field '[0].reward': -1e+30 is no score" in err


@pytest.mark.parametrize("case", ["loop", "fifo", "5000-digits", "1e30"])
def test_faults_source_hostile_file_is_refused_before_model_and_out(
    shared_data: Path, tmp_path: Path, capsys: pytest.CaptureFixture, case: str
) -> None:
    retail = shared_data / "tau2/simulations/retail__gpt-4.1__user-gpt-4.1__test40x1.json"
    source = tmp_path / "source.json"
    if case == "loop":
        source.symlink_to(source.name)
    elif case == "fifo":
        os.mkfifo(source)
    else:
        _with_reward(retail, source, "1" * 5000 if case == "5000-digits" else "1e30")
    out = tmp_path / "out"
    start = time.monotonic()
    argv = ["faults", "run", "--source", str(source), "--model", NO_MODEL, "--out", str(out)]
    err = _refused(capsys, argv)
    assert "source.json" in err
    assert not out.exists()
    assert time.monotonic() - start < 5


def test_parse_int_keeps_over_long_integers_as_huge_numbers() -> None:
    assert parse_int("12") == 12
    huge = parse_int("9" * 5000)
    assert isinstance(huge, HugeNumber) and huge.digits == 5000 and huge == float("inf")
    assert str(parse_int("-" + "9" * 4400)) == "a 4,400-digit integer"
    with pytest.raises(TraceFormatError, match="field 'r': a 5,000-digit integer is no score"):
        check_score(huge, path="f.json", line=3, field="r")


def test_traces_convert_refused_late_in_a_file_writes_no_out(
    src: Path, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    doc = json.loads(src.read_text())
    doc["simulations"][-1]["reward_info"]["reward"] = 1e30  # the last run: after others
    path = tmp_path / "late.json"
    path.write_text(json.dumps(doc))
    out = tmp_path / "out.jsonl"
    err = _refused(capsys, ["traces", "convert", str(path), "--out", str(out)])
    last = len(doc["simulations"]) - 1
    assert f"field 'simulations[{last}].reward_info.reward': 1e+30 is no score" in err
    assert not out.exists()


def test_tau2_dir_whose_simulations_folder_links_elsewhere_is_refused(
    src: Path, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    folder = save_dir(src, tmp_path / "run", index=False)
    (folder / "simulations").rename(tmp_path / "elsewhere")
    (folder / "simulations").symlink_to(tmp_path / "elsewhere")
    err = _refused(capsys, ["traces", "inspect", str(folder)])
    assert f"{folder / 'simulations'}: a link leading outside run/, not read" in err

"""tau2's directory layout (``Results.save(format="dir")``), built from the shared files
the way tau2 writes it: ``results.json`` (metadata without ``simulations``, plus a
``simulation_index``) and one ``simulations/<id>.json`` per simulation."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.traces._counts import tau2_counts, tau2_dir_counts
from tests.traces._layouts import save_dir
from toolaudit.cli.main import main
from toolaudit.errors import TraceFormatError
from toolaudit.traces import detect_format, load_episodes

SIM_FILES = [
    "airline__gemini-2.5-flash__user-same__10tasks-x2.json",
    "airline__gpt-4.1__user-gpt-4.1__test20x1.json",
    "airline__grok-4-fast-reasoning__user-same__41tasks-66sims.json",
    "airline__qwen2.5-7b__user-gpt-4.1__50x1.json",
    "retail__ft-gpt-4.1-sft__user-gpt-4.1__test40x1.json",
    "retail__gpt-4.1__user-gpt-4.1__test40x1.json",
]


@pytest.mark.parametrize("name", SIM_FILES)
def test_tau2_dir_counts_match_file_layout(shared_data: Path, tmp_path: Path, name: str) -> None:
    src = shared_data / "tau2" / "simulations" / name
    folder = save_dir(src, tmp_path / "run")
    want = tau2_counts(src)
    assert tau2_dir_counts(folder) | {"no_breakdown": want["no_breakdown"]} == want
    eps = list(load_episodes(folder))
    assert len(eps) == want["episodes"]
    assert len({e.task_id for e in eps}) == want["tasks"]
    assert sum(len(e.tool_calls()) for e in eps) == want["tool_calls"]
    assert sum(len(e.tool_results()) for e in eps) == want["tool_results"]
    assert sum(m.error for e in eps for m in e.tool_results()) == want["tool_errors"]
    rewards = [e.reward for e in eps if e.reward is not None]
    assert sum(rewards) / len(rewards) == pytest.approx(want["mean_reward"])


def test_tau2_dir_episodes_equal_file_episodes_in_index_order(
    shared_data: Path, tmp_path: Path
) -> None:
    src = shared_data / "tau2" / "simulations" / SIM_FILES[3]
    folder = save_dir(src, tmp_path / "run")
    from_file = list(load_episodes(src))
    from_dir = list(load_episodes(folder / "results.json"))
    assert [e.model_dump(exclude={"source"}) for e in from_dir] == [
        e.model_dump(exclude={"source"}) for e in from_file
    ]
    assert [e.source["episode_id"] for e in from_dir] == [e.source["episode_id"] for e in from_file]
    assert from_dir[0].source["format"] == "tau2-dir"
    assert from_dir[0].source["domain"] == "airline"


def test_tau2_dir_without_index_reads_files_in_name_order(
    shared_data: Path, tmp_path: Path
) -> None:
    src = shared_data / "tau2" / "simulations" / SIM_FILES[1]
    folder = save_dir(src, tmp_path / "run", index=False)
    sims = json.loads(src.read_text())["simulations"]
    eps = list(load_episodes(folder))
    assert [e.source["simulation_id"] for e in eps] == sorted(s["id"] for s in sims)


def test_detect_format_tau2_dir_from_folder_and_results_json(
    shared_data: Path, tmp_path: Path
) -> None:
    folder = save_dir(shared_data / "tau2" / "simulations" / SIM_FILES[1], tmp_path / "run")
    assert detect_format(folder) == "tau2-dir"
    assert detect_format(folder / "results.json") == "tau2-dir"
    compact = tmp_path / "compact"
    save_dir(shared_data / "tau2" / "simulations" / SIM_FILES[1], compact)
    meta = json.loads((compact / "results.json").read_text())
    (compact / "results.json").write_text(json.dumps(meta))  # one line, like JSONL
    assert detect_format(compact / "results.json") == "tau2-dir"


def test_inspect_tau2_dir_json_matches_raw_counts(
    shared_data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src = shared_data / "tau2" / "simulations" / SIM_FILES[4]
    folder = save_dir(src, tmp_path / "run")
    for target in (folder, folder / "results.json"):
        assert main(["traces", "inspect", str(target), "--json"]) == 0
        got = json.loads(capsys.readouterr().out)
        want = tau2_counts(src)
        assert got["format"] == "tau2-dir"
        for key in ("episodes", "tasks", "tool_calls", "tool_results", "tool_errors"):
            assert got[key] == want[key], key
        assert got["mean_reward"] == pytest.approx(want["mean_reward"])


def _fails(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    code = main(list(argv))
    err = capsys.readouterr().err
    assert code == 2
    assert "Traceback" not in err
    assert len(err.strip().splitlines()) == 1, err
    return err.strip()


def test_tau2_dir_missing_simulation_file_exits_2_naming_it(
    shared_data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = save_dir(shared_data / "tau2" / "simulations" / SIM_FILES[1], tmp_path / "run")
    index = json.loads((folder / "results.json").read_text())["simulation_index"]
    gone = folder / "simulations" / f"{index[7]['id']}.json"
    gone.unlink()
    err = _fails(capsys, "traces", "inspect", str(folder))
    assert f"field 'simulation_index[7].id': simulation file {gone} is missing" in err
    assert err.startswith(f"toolaudit: error: {folder / 'results.json'}")


@pytest.mark.parametrize("bad", ["../../outside_sim", "/etc/passwd", "sub/dir"])
def test_tau2_dir_index_id_outside_the_folder_is_refused(
    shared_data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], bad: str
) -> None:
    folder = save_dir(shared_data / "tau2" / "simulations" / SIM_FILES[1], tmp_path / "run")
    outside = tmp_path / "outside_sim.json"  # a real file the traversal would reach
    outside.write_text((folder / "simulations" / f"{_first_id(folder)}.json").read_text())
    meta = json.loads((folder / "results.json").read_text())
    meta["simulation_index"][2]["id"] = bad
    (folder / "results.json").write_text(json.dumps(meta))
    err = _fails(capsys, "traces", "inspect", str(folder))
    assert "field 'simulation_index[2].id'" in err and "outside simulations/" in err


def test_tau2_dir_index_entry_listed_twice_is_refused(
    shared_data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = save_dir(shared_data / "tau2" / "simulations" / SIM_FILES[1], tmp_path / "run")
    meta = json.loads((folder / "results.json").read_text())
    meta["simulation_index"].append(meta["simulation_index"][0])
    (folder / "results.json").write_text(json.dumps(meta))
    err = _fails(capsys, "traces", "inspect", str(folder))
    assert f"simulation_index[{len(meta['simulation_index']) - 1}].id" in err
    assert "listed twice" in err


def _first_id(folder: Path) -> str:
    return str(json.loads((folder / "results.json").read_text())["simulation_index"][0]["id"])


def test_tau2_dir_unlisted_simulation_file_is_an_error(shared_data: Path, tmp_path: Path) -> None:
    folder = save_dir(shared_data / "tau2" / "simulations" / SIM_FILES[1], tmp_path / "run")
    stray = folder / "simulations" / "zzz-stray.json"
    stray.write_text("{}")
    with pytest.raises(TraceFormatError) as info:
        list(load_episodes(folder))
    assert info.value.path == str(stray)
    assert "not listed in results.json's simulation_index" in str(info.value)


def test_tau2_dir_bad_simulation_names_file_and_field(
    shared_data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = save_dir(shared_data / "tau2" / "simulations" / SIM_FILES[1], tmp_path / "run")
    index = json.loads((folder / "results.json").read_text())["simulation_index"]
    bad = folder / "simulations" / f"{index[2]['id']}.json"
    sim = json.loads(bad.read_text())
    sim["messages"][1]["role"] = "robot"
    bad.write_text(json.dumps(sim, indent=2))
    err = _fails(capsys, "traces", "inspect", str(folder))
    assert f"{bad}, field 'messages[1].role': unknown role 'robot'" in err


def test_tau2_metadata_without_simulations_folder_is_an_error(
    shared_data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = save_dir(shared_data / "tau2" / "simulations" / SIM_FILES[1], tmp_path / "run")
    lone = tmp_path / "lone.json"
    lone.write_text((folder / "results.json").read_text())
    err = _fails(capsys, "traces", "inspect", str(lone))
    assert f"{lone}, field 'simulations': tau2 results metadata without simulations" in err

"""CLI conventions: common options on every subcommand, plain-line progress when stderr
is not a terminal, --config replay, --fail-on exit codes, group examples, and one line
(exit 1) for unexpected errors."""

from __future__ import annotations

import argparse
import io
import json
import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest

from toolaudit.cli import _common
from toolaudit.cli._common import EXIT_FINDING, PlainProgress
from toolaudit.cli.main import _walk, build_parser, main
from toolaudit.traces import Episode, Message, write_jsonl

REPO = Path(__file__).resolve().parents[2]


def _leaves() -> list[tuple[str, argparse.ArgumentParser]]:
    parser = build_parser()
    return [(path, p) for path, p in _walk(parser) if getattr(p, "_defaults", {}).get("func")]


def test_every_subcommand_accepts_the_common_options() -> None:
    leaves = _leaves()
    assert {"traces inspect", "leakage", "probe compare", "models score"} <= {n for n, _ in leaves}
    for name, p in leaves:
        options = {o for a in p._actions for o in a.option_strings}
        assert {"-v", "-q", "--log-level", "--config"} <= options, name


def test_common_options_after_the_subcommand_set_the_log_level(
    shared_data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = shared_data / "tau-bench" / "retail__tool-calling__openai-model-masked__100x1.json"
    root = logging.getLogger()
    assert main(["traces", "inspect", str(path), "--json", "-v"]) == 0
    assert root.level == logging.DEBUG
    assert main(["traces", "inspect", str(path), "--json", "-q"]) == 0
    assert root.level == logging.ERROR and _common.SETTINGS.quiet
    assert main(["traces", "inspect", str(path), "--json", "--log-level", "info"]) == 0
    assert root.level == logging.INFO
    assert main(["-v", "traces", "inspect", str(path), "--json"]) == 0  # before: kept
    assert root.level == logging.DEBUG
    capsys.readouterr()
    assert main(["traces", "inspect", str(path), "--log-level", "loud"]) == 2
    assert "invalid choice: 'loud'" in capsys.readouterr().err


def test_group_help_ends_with_an_example() -> None:
    groups = {path: p for path, p in _walk(build_parser()) if " " not in path}
    for name in ("traces", "probe", "models", "datasets", "faults"):
        assert "Example:\n  toolaudit " + name in (groups[name].epilog or ""), name


def test_plain_progress_prints_lines_with_eta() -> None:
    out = io.StringIO()
    ticks = iter([0.0, 1.0, 5.0, 12.0, 20.0, 30.0])
    p = PlainProgress("scoring", every=10, stream=out, clock=lambda: next(ticks))
    p(1, 10, "t1")  # 1 s: too early
    p(2, 10, "t2")  # 5 s: too early
    p(4, 10, "t4")  # 12 s: first line
    p(5, 10, "t5")  # 20 s: 8 s after the last line, skipped
    p(10, 10, "done")  # 30 s: complete, always printed
    assert out.getvalue().splitlines() == [
        "scoring: 4/10 (40%) t4; elapsed 12s, ETA 22s",  # 11 s for 3 units since t1
        "scoring: 10/10 (100%) done; elapsed 30s",
    ]


def test_non_tty_run_prints_progress_lines(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(REPO / "src"), "TOOLAUDIT_PROGRESS_EVERY": "0"}
    env.pop("TOOLAUDIT_PROGRESS", None)
    cmd = [sys.executable, "-m", "toolaudit.cli.main", "datasets", "make", "tcr-shortcut"]
    cmd += ["--out", str(tmp_path / "tcr"), "--scale", "0.06", "--seed", "0"]
    r = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 0, r.stderr
    lines = [ln for ln in r.stderr.splitlines() if ln.startswith("generating tcr-shortcut:")]
    assert len(lines) == 3  # the rate is measured from the first report on
    assert lines[0].startswith("generating tcr-shortcut: 500/") and ", ETA " not in lines[0]
    assert lines[1].startswith("generating tcr-shortcut: 1000/") and ", ETA " in lines[1]
    assert "(100%)" in lines[2]
    quiet_cmd = [*cmd[:7], str(tmp_path / "q"), *cmd[8:], "-q"]
    quiet = subprocess.run(quiet_cmd, capture_output=True, text=True, env=env, timeout=120)
    assert quiet.returncode == 0 and "generating" not in quiet.stderr


def _episodes(path: Path, rewards: list[float]) -> Path:
    write_jsonl(
        path,
        [
            Episode(task_id=f"t{i}", messages=[Message(role="user", content="q")], reward=r)
            for i, r in enumerate(rewards)
        ],
    )
    return path


def test_probe_compare_fail_on_different_exits_3(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a = _episodes(tmp_path / "a.jsonl", [1.0] * 30)
    b = _episodes(tmp_path / "b.jsonl", [0.0] * 30)
    same = _episodes(tmp_path / "same.jsonl", [1.0] * 30)
    assert main(["probe", "compare", str(a), str(b), "--json", "--fail-on", "different"]) == (
        EXIT_FINDING
    )
    assert json.loads(capsys.readouterr().out)["equivalence"] == "different"
    assert main(["probe", "compare", str(a), str(same), "--json", "--fail-on", "different"]) == 0
    assert json.loads(capsys.readouterr().out)["equivalence"] == "equivalent"
    assert main(["probe", "compare", str(a), str(b), "--json"]) == 0  # no gate, no failure
    capsys.readouterr()
    assert main(["probe", "compare", str(a), str(b), "--fail-on", "worse"]) == 2
    assert "--fail-on: invalid value 'worse'; allowed: different," in capsys.readouterr().err
    # under -q the failing gate is still named: a CI log says why it failed
    code = main(["-q", "probe", "compare", str(a), str(b), "--json", "--fail-on", "different"])
    assert code == EXIT_FINDING
    assert capsys.readouterr().err == "toolaudit: --fail-on different: finding present (exit 3)\n"


def test_config_replays_a_results_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a = _episodes(tmp_path / "a.jsonl", [1.0, 0.0, 1.0, 1.0] * 5)
    b = _episodes(tmp_path / "b.jsonl", [1.0, 1.0, 0.0, 1.0] * 5)
    argv = ["probe", "compare", str(a), str(b), "--margin", "0.2", "--seed", "7"]
    assert main([*argv, "--out", str(tmp_path / "first"), "--json"]) == 0
    first = json.loads(capsys.readouterr().out)
    recorded = tmp_path / "first" / "compare.json"
    assert main(["probe", "compare", "--config", str(recorded), "--json"]) == 0
    again = json.loads(capsys.readouterr().out)
    assert again == first and again["meta"]["config"]["margin"] == 0.2
    assert main(["probe", "compare", "--config", str(recorded), "--margin", "0.3", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["meta"]["config"]["margin"] == 0.3  # CLI wins


def test_config_replays_from_another_folder_and_says_when_an_input_changed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    run_dir, other = tmp_path / "run", tmp_path / "elsewhere"
    run_dir.mkdir()
    other.mkdir()
    _episodes(run_dir / "a.jsonl", [1.0, 0.0, 1.0, 1.0] * 5)
    _episodes(run_dir / "b.jsonl", [1.0, 1.0, 0.0, 1.0] * 5)
    monkeypatch.chdir(run_dir)  # inputs given relative to the folder the run starts in
    assert (
        main(["-q", "probe", "compare", "a.jsonl", "b.jsonl", "--seed", "3", "--out", "out"]) == 0
    )
    first = json.loads((run_dir / "out" / "compare.json").read_text())
    assert first["meta"]["inputs"]["a"]["path"] == "../a.jsonl"
    monkeypatch.chdir(other)
    recorded = run_dir / "out" / "compare.json"
    # from another working folder, into a folder beside the first: byte for byte the same
    # file (input paths are recorded relative to the results file, in meta.config and in
    # meta.inputs: no machine's layout in results)
    again = run_dir / "again"
    assert main(["-q", "probe", "compare", "--config", str(recorded), "--out", str(again)]) == 0
    assert (again / "compare.json").read_bytes() == recorded.read_bytes()
    assert first["meta"]["config"]["a"] == "../a.jsonl"
    _episodes(run_dir / "a.jsonl", [0.0, 0.0, 1.0, 1.0] * 5)  # the input changes
    with caplog.at_level(logging.WARNING):
        assert main(["-q", "probe", "compare", "--config", str(recorded), "--out", "third"]) == 0
    assert any("input a" in r.getMessage() and "changed since the run" in r.getMessage()
               for r in caplog.records)  # fmt: skip


@pytest.mark.parametrize(
    ("key", "value", "says"),
    [
        ("seed", "abc", "invalid"),
        ("seed", 1.5, "invalid"),
        ("seed", [1, 2], "a list, but --seed takes one value"),
        ("margin", "nan", "margin"),
        ("fail_on", ["nosuch"], "invalid value 'nosuch'; allowed: different"),
    ],
)
def test_config_with_a_bad_recorded_value_is_one_line_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], key: str, value: object, says: str
) -> None:
    a = _episodes(tmp_path / "a.jsonl", [1.0, 0.0] * 5)
    assert main(["-q", "probe", "compare", str(a), str(a), "--out", str(tmp_path / "c")]) == 0
    doc = json.loads((tmp_path / "c" / "compare.json").read_text())
    doc["meta"]["config"][key] = value
    bad = tmp_path / "c" / "bad.json"  # beside the original: meta.inputs still resolve
    bad.write_text(json.dumps(doc))
    capsys.readouterr()
    assert main(["probe", "compare", "--config", str(bad), "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and says in err[0] and "unexpected" not in err[0], err
    assert str(bad) in err[0] or key.replace("_", "-") in err[0]
    assert not (tmp_path / "o").exists()


def test_config_from_another_command_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a = _episodes(tmp_path / "a.jsonl", [1.0, 0.0] * 5)
    assert main(["probe", "compare", str(a), str(a), "--out", str(tmp_path / "c")]) == 0
    capsys.readouterr()
    recorded = tmp_path / "c" / "compare.json"
    assert main(["leakage", str(a), "--out", str(tmp_path / "l"), "--config", str(recorded)]) == 2
    err = capsys.readouterr().err.strip()
    assert err == (
        f"toolaudit: error: {recorded}, field 'meta.command': results of "
        "'toolaudit probe compare', not of 'leakage'"
    )
    other = tmp_path / "other.json"
    other.write_text(json.dumps({"results": []}))
    assert main(["probe", "compare", "--config", str(other)]) == 2
    assert "field 'meta.config': not a toolaudit results file" in capsys.readouterr().err


def test_unexpected_error_is_one_line_exit_1(
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
) -> None:
    import toolaudit.traces

    def boom(*args: object, **kwargs: object) -> None:
        raise RuntimeError("disk on fire\nsecond line")

    monkeypatch.setattr(toolaudit.traces, "inspect_path", boom)
    assert main(["traces", "inspect", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert err.strip().splitlines() == [
        "toolaudit: unexpected error: RuntimeError: disk on fire\\nsecond line "
        "(rerun with -v for the traceback)"
    ]
    assert main(["traces", "inspect", str(tmp_path), "-v"]) == 1
    assert capsys.readouterr().err.count("\n") == 1
    assert "Traceback" in caplog.text and "disk on fire" in caplog.text  # logged with -v


def test_plain_progress_on_a_resumed_run_never_promises_seconds() -> None:
    # The study that printed "641/750 (85%); elapsed 11s, ETA 3s": 640 runs were on disk.
    out = io.StringIO()
    ticks = iter([0.0, 0.5, 11.0, 23.0])
    p = PlainProgress("probe runs", every=0, stream=out, clock=lambda: next(ticks))
    p(640, 750, "resumed")
    p(641, 750, "")
    p(642, 750, "")
    lines = out.getvalue().splitlines()
    assert lines[0] == "probe runs: 640/750 (85%) resumed; elapsed 0s"
    assert lines[1].endswith("ETA 19m04s") and lines[2].endswith("ETA 20m15s")


def test_plain_progress_eta_follows_the_current_stage() -> None:
    out = io.StringIO()
    ticks = iter([0.0, 10.0, 100.0, 110.0, 120.0])
    p = PlainProgress("leakage", every=0, stream=out, clock=lambda: next(ticks))
    p(10, 10, "tokenized")  # stage 1 complete at 10 s
    p(1, 20, "fit 1")  # stage 2 first seen at 100 s: no rate yet
    p(2, 20, "fit 2")  # 10 s per step since then
    p(4, 20, "fit 4")
    assert out.getvalue().splitlines() == [
        "leakage: 10/10 (100%) tokenized; elapsed 10s",
        "leakage: 1/20 (5%) fit 1; elapsed 1m40s",
        "leakage: 2/20 (10%) fit 2; elapsed 1m50s, ETA 3m00s",
        "leakage: 4/20 (20%) fit 4; elapsed 2m00s, ETA 1m47s",  # 20 s for 3 steps
    ]


def test_common_options_leave_a_subcommands_own_option_alone() -> None:
    from toolaudit.cli.main import _common_options

    parser = argparse.ArgumentParser()
    parser.add_argument("--config", help="the subcommand's own config file")
    parser.add_argument("-q", type=int, help="a subcommand's own -q")
    _common_options(parser, top=False)
    config = parser._option_string_actions["--config"]
    assert config.help == "the subcommand's own config file"
    assert parser._option_string_actions["-q"].type is int
    assert "--quiet" not in parser._option_string_actions  # -q/--quiet is skipped whole
    assert "--log-level" in parser._option_string_actions


def test_config_replays_leakage_feature_sets_and_switched_off_dilution(tmp_path: Path) -> None:
    from toolaudit.cli.main import apply_config

    recorded = tmp_path / "leakage.json"
    features = [{"name": "word_1_2", "min_df": 3}, {"name": "char_wb_3_5", "min_df": 3}]
    meta = {
        "command": "toolaudit leakage",
        "seed": 4,
        "config": {
            "features": features,
            "dilution": None,
            "n_boot": 300,
            "cv_folds": 3,
            "lr": {"C": 1.0},
        },
    }
    recorded.write_text(json.dumps({"meta": meta}))
    argv = ["leakage", "data.jsonl", "--out", "o", "--config", str(recorded)]
    parser = build_parser()
    replayed = apply_config(parser, argv)
    args = parser.parse_args(argv)
    assert replayed == {
        "features": ["word_1_2", "char_wb_3_5"],
        "dilution": False,
        "n_boot": 300,
        "cv_folds": 3,
        "seed": 4,
    }
    assert (args.features, args.dilution, args.n_boot, args.seed) == (
        ["word_1_2", "char_wb_3_5"],
        False,
        300,
        4,
    )
    meta["config"]["dilution"] = {"features": "char_wb_3_5", "carrier": "tool_a", "n_seeds": 2}
    recorded.write_text(json.dumps({"meta": meta}))
    parser = build_parser()
    apply_config(parser, argv)
    args = parser.parse_args(argv)
    assert (args.dilution, args.carrier) == (True, "tool_a")
    assert args.features == ["word_1_2", "char_wb_3_5"]  # the sub-setting does not override


def test_plain_progress_shortens_long_labels_and_shows_control_characters() -> None:
    out = io.StringIO()
    p = PlainProgress("x", every=0, stream=out, clock=lambda: 0.0)
    p(1, 1, "+".join(f"tool_{i}" for i in range(40)))
    p(1, 1, "evil\x1b[31m")
    first, second = out.getvalue().splitlines()
    assert first.startswith("x: 1/1 (100%) tool_0+tool_1") and "...; elapsed 0s" in first
    assert len(first) < 120
    assert second == "x: 1/1 (100%) evil\\x1b[31m; elapsed 0s"


def test_help_shows_every_default(capsys: pytest.CaptureFixture[str]) -> None:
    # an option with a value shows it (0 included), unless its help already states it
    assert main(["faults", "run", "--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "seed (falsified payment ids) (default: 0)" in text
    assert "(default: 3)" in text and "(default: cpu)" in text
    assert "(default: None)" not in text and "(default: False)" not in text

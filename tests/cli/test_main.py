import subprocess
import sys

import pytest

from toolaudit.audits import AUDITS, Registration, audit_commands
from toolaudit.cli.main import TOOL_COMMANDS, _walk, build_parser, commands, main


def test_main_without_command_prints_help_and_exits_2(capsys):
    assert main([]) == 2
    assert "usage: toolaudit" in capsys.readouterr().out


def _subcommands(parser):
    return next(a for a in parser._actions if a.dest == "command").choices


def _check_every_command_has_help_with_example(parser) -> None:
    sub = _subcommands(parser)
    assert list(sub) == list(commands())  # a missing subcommand module fails here
    for path, p in [(name, p) for name, p in sub.items()] + _walk(parser):
        assert "Example" in (p.epilog or "") or p._subparsers is not None, path
        assert p.format_help().startswith(f"usage: {p.prog}"), path  # --help renders


def test_every_registered_command_has_help_with_example():
    _check_every_command_has_help_with_example(build_parser())


def test_commands_follow_the_audit_registry_in_help_order():
    assert list(commands()) == [
        "traces", "datasets", "leakage", "redact", "redact-seeds", "models", "probe", "faults",
        "demo",
    ]  # fmt: skip
    assert set(commands()) == {*audit_commands(), *TOOL_COMMANDS}


def test_a_missing_subcommand_module_fails_the_example_check(monkeypatch, caplog):
    # A registry line whose subcommand module is missing: the parser is built without it
    # (with a warning), and the check above fails.
    monkeypatch.setitem(AUDITS, "gone", Registration("toolaudit.traces:TRACES_AUDIT", "gone"))
    parser = build_parser()
    assert "gone" not in _subcommands(parser) and "gone" in commands()
    assert "toolaudit.cli._gone is missing" in caplog.text
    with pytest.raises(AssertionError):
        _check_every_command_has_help_with_example(parser)


def test_console_script_runs_as_module():
    r = subprocess.run(
        [sys.executable, "-m", "toolaudit.cli.main", "--version"], capture_output=True, text=True
    )
    assert r.returncode == 0 and r.stdout.startswith("toolaudit ")


@pytest.mark.parametrize("reader", ["head -c 10", "head -c 0"])
def test_a_closed_output_pipe_ends_quietly(shared_data, reader):
    # The reader closes the pipe (`head -c 0` before anything is written, so the write
    # certainly fails): no traceback, no "unexpected error", exit 0 or the POSIX 141.
    import subprocess
    import sys

    sim = shared_data / "tau2" / "simulations" / "airline__gpt-4.1__user-gpt-4.1__test20x1.json"
    cmd = (
        f"'{sys.executable}' -m toolaudit.cli.main traces inspect '{sim}' --json"
        f" | {reader} >/dev/null; echo ${{PIPESTATUS[0]}} >&2"
    )
    done = subprocess.run(["bash", "-c", cmd], capture_output=True, text=True, timeout=120)
    lines = done.stderr.strip().splitlines()
    assert lines == [lines[-1]], done.stderr  # nothing but the exit status
    assert lines[-1] == ("141" if reader == "head -c 0" else lines[-1]) in ("0", "141")


def test_two_conversions_into_one_file_do_not_share_a_temporary_name(tmp_path, shared_data):
    # Each writer gets its own ".NAME.XXXX.partial" beside the target; both finish, the
    # file holds one whole conversion, no temporary file is left, permissions are plain.
    import concurrent.futures
    import json
    import os

    sim = shared_data / "tau2" / "simulations" / "airline__gpt-4.1__user-gpt-4.1__test20x1.json"
    out = tmp_path / "runs.jsonl"
    args = ["traces", "convert", str(sim), "--to", "episodes", "--out", str(out)]
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        codes = list(pool.map(lambda _: main(list(args)), range(2)))
    assert codes == [0, 0]
    lines = out.read_text().splitlines()
    assert len(lines) == 20 and all(json.loads(x)["task_id"] for x in lines)
    assert [p.name for p in tmp_path.iterdir()] == ["runs.jsonl"]
    mask = os.umask(0)
    os.umask(mask)
    assert out.stat().st_mode & 0o777 == 0o666 & ~mask

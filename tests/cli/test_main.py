import subprocess
import sys

from toolaudit.cli.main import COMMANDS, build_parser, main


def test_main_without_command_prints_help_and_exits_2(capsys):
    assert main([]) == 2
    assert "usage: toolaudit" in capsys.readouterr().out


def _subcommands(parser):
    return next(a for a in parser._actions if a.dest == "command").choices


def test_every_registered_command_has_help_with_example():
    sub = _subcommands(build_parser())
    assert set(sub) == set(COMMANDS)  # a missing subcommand module fails here
    for name, p in sub.items():
        assert "Example" in (p.epilog or "") or p._subparsers is not None, name


def test_a_missing_subcommand_module_is_caught(monkeypatch, caplog):
    monkeypatch.setitem(COMMANDS, "gone", "toolaudit.cli._gone")
    assert set(_subcommands(build_parser())) != set(COMMANDS)
    assert "toolaudit.cli._gone is missing" in caplog.text


def test_console_script_runs_as_module():
    r = subprocess.run(
        [sys.executable, "-m", "toolaudit.cli.main", "--version"], capture_output=True, text=True
    )
    assert r.returncode == 0 and r.stdout.startswith("toolaudit ")

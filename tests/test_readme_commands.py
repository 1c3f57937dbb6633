"""The README's examples run as written, in order, in a fresh folder (issue 44).

Every fenced block of README.md whose lines are shell commands is extracted (Python blocks,
output blocks and comment lines are not); the two-command set-up block (``make demo``,
``make test``) is skipped by its content. The slow test runs the commands with bash in a
fresh temporary folder laid out like a checkout: ``TMP/repo`` (the working folder, with
``examples/`` linked from this repository) beside ``TMP/shared`` (a link to the real
``../shared``), so every relative path works as the README writes it.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
README = REPO / "README.md"
#: Fence languages that hold shell commands (an unlabelled fence is checked by its lines).
SHELL_LANGS = frozenset({"", "sh", "bash", "shell", "console"})
#: A command line starts with one of these programs (after any VAR=value assignments).
PROGRAMS = frozenset({"toolaudit", "python", "python3", "make", "pip", "inspect", "tau2"})
#: The set-up block: what ``make demo`` and ``make test`` do, not an example to rerun here.
SETUP_COMMANDS = ("make demo", "make test")
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=\S*$")


@dataclass(frozen=True, slots=True)
class Command:
    """One shell command of the README and the line it starts on (1-based)."""

    line: int
    text: str


def _program(command: str) -> str:
    words = command.split()
    while words and _ASSIGNMENT.match(words[0]):
        words = words[1:]
    return words[0] if words else ""


def _block_commands(lines: list[tuple[int, str]]) -> list[Command]:
    """The commands of one block: comment and blank lines dropped, ``\\`` continuations
    joined."""
    out: list[Command] = []
    pending: tuple[int, str] | None = None
    for number, raw in lines:
        text = raw.strip()
        if pending is None and (not text or text.startswith("#")):
            continue
        start, sofar = pending if pending is not None else (number, "")
        if text.endswith("\\"):
            pending = (start, sofar + text[:-1].rstrip() + " ")
            continue
        out.append(Command(start, sofar + text))
        pending = None
    if pending is not None:
        out.append(Command(pending[0], pending[1].strip()))
    return out


def readme_commands(text: str) -> list[Command]:
    """The shell commands of every command block of a README, in order.

    A block counts when its fence has no language or a shell one and every command in it
    starts with a known program (so output blocks are left out); the set-up block, whose
    commands are ``make demo`` and ``make test``, is skipped.
    """
    commands: list[Command] = []
    block: list[tuple[int, str]] | None = None
    lang = ""
    for number, line in enumerate(text.splitlines(), start=1):
        if line.startswith("```"):
            if block is None:
                block, lang = [], line[3:].strip().lower()
                continue
            found = _block_commands(block)
            is_shell = lang in SHELL_LANGS and bool(found)
            is_shell = is_shell and all(_program(c.text) in PROGRAMS for c in found)
            is_setup = bool(found) and all(c.text.startswith(SETUP_COMMANDS) for c in found)
            if is_shell and not is_setup:
                commands += found
            block = None
            continue
        if block is not None:
            block.append((number, line))
    return commands


def test_readme_commands_are_extracted_in_order() -> None:
    commands = readme_commands(README.read_text(encoding="utf-8"))
    texts = [c.text for c in commands]
    assert not any(t.startswith(SETUP_COMMANDS) for t in texts)
    assert texts[0].startswith("toolaudit traces inspect ../shared/data/")
    assert any(t.startswith("toolaudit datasets make tcr-shortcut --out tcr ") for t in texts)
    # every file a command reads that no earlier command writes is shipped
    for name in ("examples/chat.json", "examples/tools.json", "examples/format_examples.py"):
        assert any(name in t for t in texts), name
        assert (REPO / name).is_file(), name
    lines = [c.line for c in commands]
    assert lines == sorted(lines)


def test_readme_commands_join_continuations_and_skip_comments() -> None:
    text = (
        "```\nmake demo\nmake test\n```\n"
        "```python\nprint('no')\n```\n"
        "```\n# a comment\ntoolaudit a \\\n  --b c   # trailing\nOMP_NUM_THREADS=1 toolaudit d\n```\n"
        "```\nembedded:qwen: P(call) = 0.5\n```\n"
    )
    got = readme_commands(text)
    assert got == [
        Command(10, "toolaudit a --b c   # trailing"),
        Command(12, "OMP_NUM_THREADS=1 toolaudit d"),
    ]


def _bin_dir() -> Path:
    venv = REPO / ".venv" / "bin"
    return venv if (venv / "toolaudit").exists() else Path(sys.executable).parent


@pytest.mark.slow
@pytest.mark.timeout(5400)
def test_readme_commands_run_in_order_in_a_fresh_folder(tmp_path: Path, shared_data: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "examples").symlink_to(REPO / "examples", target_is_directory=True)
    (tmp_path / "shared").symlink_to((REPO.parent / "shared").resolve(), target_is_directory=True)
    env = dict(os.environ)
    env["PATH"] = f"{_bin_dir()}{os.pathsep}{env.get('PATH', '')}"
    env.pop("TAU2_DATA_DIR", None)  # the README's paths name ../shared/data themselves
    commands = readme_commands(README.read_text(encoding="utf-8"))
    timings: list[tuple[float, Command]] = []
    for cmd in commands:
        start = time.monotonic()
        done = subprocess.run(
            ["bash", "-c", cmd.text], cwd=repo, env=env, capture_output=True, text=True,
            check=False,
        )  # fmt: skip
        timings.append((time.monotonic() - start, cmd))
        assert done.returncode == 0, (
            f"README.md line {cmd.line}: exit {done.returncode}: {cmd.text}\n"
            f"--- stderr, last 3000 characters ---\n{done.stderr[-3000:]}"
        )
    for seconds, cmd in timings:
        sys.stdout.write(f"{seconds:8.1f} s  README.md:{cmd.line}  {cmd.text[:100]}\n")
    sys.stdout.write(f"{sum(s for s, _ in timings):8.1f} s  in all ({len(timings)} commands)\n")

"""The shell commands of a Markdown file's command blocks, as a reader would copy them.

Shared by the README test and the docs test (issue 44: every command block runs as
written, in order, in a fresh folder). A fenced block counts when its fence has no
language or a shell one and every command in it starts with a known program, so output
blocks and Python are left out; the set-up block (``make demo``, ``make test``) is not an
example. A block that cannot run as written in a test (a synopsis with optional
arguments in brackets, a placeholder for the user's own model or server, a study of
hours) carries its reason in an HTML comment on the line right above its fence, which
Markdown does not show::

    <!-- not run by tests: a synopsis: optional arguments in brackets -->
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
#: Fence languages that hold shell commands (an unlabelled fence is checked by its lines).
SHELL_LANGS = frozenset({"", "sh", "bash", "shell", "console"})
#: A command line starts with one of these programs (after any VAR=value assignments).
PROGRAMS = frozenset({"toolaudit", "python", "python3", "make", "pip", "inspect", "tau2"})
#: The set-up block: what ``make demo`` and ``make test`` do, not an example to rerun here.
SETUP_COMMANDS = ("make demo", "make test")
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=\S*$")
_NOT_RUN = re.compile(r"^<!--\s*not run by tests:\s*(.*?)\s*-->\s*$")


@dataclass(frozen=True, slots=True)
class Command:
    """One shell command of a Markdown file and the line it starts on (1-based)."""

    line: int
    text: str


@dataclass(frozen=True, slots=True)
class Block:
    """One command block: its opening fence's line, its commands, and the reason it is
    not run by tests (empty when it is)."""

    line: int
    commands: list[Command] = field(default_factory=list)
    not_run: str = ""


def program(command: str) -> str:
    """The program a command line runs (after any ``VAR=value`` assignments)."""
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


def command_blocks(text: str) -> list[Block]:
    """Every command block of a Markdown text, in order, with its not-run reason."""
    blocks: list[Block] = []
    body: list[tuple[int, str]] | None = None
    lang, start, reason, previous = "", 0, "", ""
    for number, line in enumerate(text.splitlines(), start=1):
        if line.startswith("```"):
            if body is None:
                body, lang, start = [], line[3:].strip().lower(), number
                m = _NOT_RUN.match(previous.strip())
                reason = m.group(1) if m else ""
                continue
            found = _block_commands(body)
            is_shell = lang in SHELL_LANGS and bool(found)
            # a line of assignments only (``S=../shared/data``) sets a variable for the rest
            is_shell = is_shell and all(program(c.text) in PROGRAMS or not program(c.text)
                                        for c in found)  # fmt: skip
            is_shell = is_shell and any(program(c.text) in PROGRAMS for c in found)
            is_setup = bool(found) and all(c.text.startswith(SETUP_COMMANDS) for c in found)
            if is_shell and not is_setup:
                blocks.append(Block(start, found, reason))
            body = None
            continue
        if body is not None:
            body.append((number, line))
        previous = line
    return blocks


def runnable_commands(text: str) -> list[Command]:
    """The commands of every block a test runs, in order."""
    return [c for b in command_blocks(text) if not b.not_run for c in b.commands]


def bin_dir() -> Path:
    """Where ``toolaudit`` is: the project's venv, else this interpreter's."""
    venv = REPO / ".venv" / "bin"
    return venv if (venv / "toolaudit").exists() else Path(sys.executable).parent


def fresh_checkout(tmp_path: Path) -> Path:
    """A fresh working folder laid out like a checkout: ``TMP/repo`` (with ``examples/``
    and ``benchmarks/`` linked from this repository; nothing a command writes lands in the
    checkout) beside ``TMP/shared`` (a link to the real ``../shared``), so every relative
    path works as the docs write it."""
    repo = tmp_path / "repo"
    repo.mkdir()
    for name in ("examples", "benchmarks"):
        (repo / name).symlink_to(REPO / name, target_is_directory=True)
    (tmp_path / "shared").symlink_to((REPO.parent / "shared").resolve(), target_is_directory=True)
    return repo


def run_in_order(commands: list[Command], cwd: Path, source: str) -> list[tuple[float, Command]]:
    """Run each command with bash in ``cwd``, in order (variables assigned on a line of
    their own hold for the commands after it); the first failure raises
    ``AssertionError`` naming the file, line, exit code and the end of stderr."""
    env = dict(os.environ)
    env["PATH"] = f"{bin_dir()}{os.pathsep}{env.get('PATH', '')}"
    env.pop("TAU2_DATA_DIR", None)  # the docs' paths name ../shared/data themselves
    timings: list[tuple[float, Command]] = []
    assignments = ""  # a line like ``S=../shared/data`` holds for the commands after it
    for cmd in commands:
        if not program(cmd.text):
            assignments += cmd.text + "\n"
            continue
        t0 = time.monotonic()
        done = subprocess.run(
            ["bash", "-c", assignments + cmd.text], cwd=cwd, env=env, capture_output=True,
            text=True, check=False,
        )  # fmt: skip
        timings.append((time.monotonic() - t0, cmd))
        assert done.returncode == 0, (
            f"{source} line {cmd.line}: exit {done.returncode}: {cmd.text}\n"
            f"--- stderr, last 3000 characters ---\n{done.stderr[-3000:]}"
        )
    for seconds, cmd in timings:
        sys.stdout.write(f"{seconds:8.1f} s  {source}:{cmd.line}  {cmd.text[:100]}\n")
    sys.stdout.write(f"{sum(s for s, _ in timings):8.1f} s  in all ({len(timings)} commands)\n")
    return timings

"""The README's examples run as written, in order, in a fresh folder (issue 44).

Every command block of README.md is extracted by ``tests/_doc_commands.py`` (Python
blocks, output blocks and comment lines are not; the two-command set-up block is skipped
by its content). The slow test runs the commands with bash in a fresh temporary folder
laid out like a checkout (``TMP/repo`` beside ``TMP/shared``), so every relative path
works as the README writes it. docs/*.md have their own test, ``test_docs_commands.py``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests._doc_commands import (
    REPO,
    SETUP_COMMANDS,
    Command,
    command_blocks,
    fresh_checkout,
    run_in_order,
    runnable_commands,
)

README = REPO / "README.md"


def test_readme_commands_are_extracted_in_order() -> None:
    text = README.read_text(encoding="utf-8")
    assert not [b.line for b in command_blocks(text) if b.not_run], "the README runs all"
    commands = runnable_commands(text)
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
        "<!-- not run by tests: a synopsis -->\n```\ntoolaudit e [--f]\n```\n"
    )
    assert runnable_commands(text) == [
        Command(10, "toolaudit a --b c   # trailing"),
        Command(12, "OMP_NUM_THREADS=1 toolaudit d"),
    ]
    blocks = command_blocks(text)
    assert [(b.line, b.not_run) for b in blocks] == [(8, ""), (18, "a synopsis")]
    assert blocks[1].commands == [Command(19, "toolaudit e [--f]")]


@pytest.mark.slow
@pytest.mark.timeout(5400)
def test_readme_commands_run_in_order_in_a_fresh_folder(tmp_path: Path, shared_data: Path) -> None:
    commands = runnable_commands(README.read_text(encoding="utf-8"))
    run_in_order(commands, fresh_checkout(tmp_path), "README.md")

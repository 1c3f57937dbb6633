"""Every command block in docs/*.md runs as written, in order, in a fresh folder (issue 44).

The default test checks the blocks themselves: each either runs as written or says, in a
``<!-- not run by tests: REASON -->`` line above its fence, why a test cannot run it (a
synopsis, a placeholder for the user's own model or server, a study of hours whose
committed folder under ``results/`` is the record). A command that a test would run may
not hold a placeholder, so a synopsis cannot slip into the runnable set unmarked. The slow
test runs each page's runnable commands in order in a fresh folder laid out like a
checkout, with the shared data at ``../shared/data`` as the data root.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests._doc_commands import REPO, command_blocks, fresh_checkout, run_in_order

DOCS = sorted((REPO / "docs").glob("*.md"))
#: What a command that runs as written cannot hold: optional arguments in brackets, the
#: docs' placeholders, a server URL (a test starts no server for a page).
_PLACEHOLDER = re.compile(
    r"\[--|\[[A-Z]|\bMY-MODEL\b|/path/to/|\bDATA\b|\bOUT\b|\bCOPY_OF\b|https?://|\.\.\."
)


def test_docs_have_command_blocks_and_every_skip_says_why() -> None:
    runnable = 0
    for page in DOCS:
        for block in command_blocks(page.read_text(encoding="utf-8")):
            if block.not_run:
                assert len(block.not_run) >= 10, f"{page.name}:{block.line}: say why"
                continue
            for cmd in block.commands:
                found = _PLACEHOLDER.search(cmd.text)
                assert found is None, (
                    f"docs/{page.name} line {cmd.line} holds {found.group(0)!r}: make it run "
                    "as written or mark its block <!-- not run by tests: REASON -->"
                )
                runnable += 1
    assert runnable >= 20


def test_placeholder_check_catches_a_synopsis() -> None:
    text = "```\ntoolaudit demo --out demo-out [--seed 0]\n```\n"
    (block,) = command_blocks(text)
    assert _PLACEHOLDER.search(block.commands[0].text)
    assert not _PLACEHOLDER.search("toolaudit traces inspect ../shared/data/tau2/domains/retail")


@pytest.mark.slow
@pytest.mark.timeout(5400)
@pytest.mark.parametrize("page", DOCS, ids=[p.name for p in DOCS])
def test_doc_commands_run_in_order_in_a_fresh_folder(
    page: Path, tmp_path: Path, shared_data: Path
) -> None:
    commands = [
        c
        for b in command_blocks(page.read_text(encoding="utf-8"))
        if not b.not_run
        for c in b.commands
    ]
    if not commands:
        pytest.skip(f"docs/{page.name} has no runnable command block")
    run_in_order(commands, fresh_checkout(tmp_path), f"docs/{page.name}")

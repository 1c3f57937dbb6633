"""Committed results name no machine's layout (issue 43, Deliver 5): every path in
``results/`` is relative (to the results file, the data root or the repository), so a
replay or a reader elsewhere sees the same files."""

from __future__ import annotations

import re
from pathlib import Path

RESULTS = Path(__file__).resolve().parents[1] / "results"
TEXT = {".json", ".jsonl", ".md", ".txt", ".sh", ".html", ".py"}
#: an absolute path: a JSON string, or a word in prose or a command, that starts at "/"
ABSOLUTE = re.compile(r'(?:"|(?:^|[\s(=\'`]))(/(?:[A-Za-z0-9_.-]+/)+[A-Za-z0-9_.-]*)')


def machine_path(text: str) -> str | None:
    """The first absolute path in ``text`` that names this machine's layout: its first
    two components exist here, or it lies under /tmp or /home (a benchmark's own tool
    output, such as /data/pipeline/..., is content, not a path of ours)."""
    for hit in ABSOLUTE.finditer(text):
        path = hit.group(1)
        head = Path(*Path(path).parts[:3])
        if path.startswith(("/tmp/", "/home/")) or (len(Path(path).parts) > 2 and head.exists()):
            return path
    return None


def test_committed_results_hold_no_absolute_path() -> None:
    found = []
    for path in sorted(RESULTS.rglob("*")):
        if path.suffix not in TEXT or not path.is_file() or "logs" in path.parts:
            continue
        for lineno, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            hit = machine_path(line)
            if hit:
                found.append(f"{path.relative_to(RESULTS)}:{lineno}: {hit}")
    assert found == []


def test_the_check_finds_a_planted_path() -> None:
    assert machine_path(f'"data_root": "{RESULTS.parent}/build"')
    assert machine_path("cd /home/me/toolaudit && bash command.sh")
    assert not machine_path('"data": "../../build/tcr/examples.jsonl", "ratio": "1/2"')
    assert not machine_path("/data/pipeline/thermompnn/outputs/x.csv")  # a tool's output

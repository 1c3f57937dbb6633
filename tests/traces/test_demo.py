"""The traces part of the demo: one table over the public files, or a clear skip line."""

from __future__ import annotations

import json
from pathlib import Path

from tests.traces._counts import tau2_counts
from toolaudit.report import Table
from toolaudit.traces import demo_sections


def _noop(done: int, total: int, label: str) -> None:
    return None


def test_demo_sections_table_covers_every_public_file(shared_data: Path, tmp_path: Path) -> None:
    sections = demo_sections(tmp_path, data_root=shared_data, seed=0, progress=_noop)
    assert len(sections) == 1
    table = next(b for b in sections[0].blocks if isinstance(b, Table))
    names = [row[0] for row in table.rows]
    n_files = len(list(shared_data.glob("tau2/simulations/*.json"))) + len(
        list(shared_data.glob("tau-bench/*.json"))
    )
    assert len(names) == n_files + 1 and "tau2/domains/retail" in names
    qwen = "tau2/simulations/airline__qwen2.5-7b__user-gpt-4.1__50x1.json"
    row = table.rows[names.index(qwen)]
    want = tau2_counts(shared_data / qwen)
    assert row[2:6] == [want["episodes"], want["tasks"], want["tool_calls"], want["tool_results"]]
    first = (tmp_path / "traces.json").read_bytes()
    results = json.loads(first)
    assert results["meta"]["seed"] == 0 and len(results["files"]) == n_files + 1
    demo_sections(tmp_path, data_root=shared_data, seed=0, progress=_noop)
    assert (tmp_path / "traces.json").read_bytes() == first


def test_demo_sections_without_data_root_says_skipped(tmp_path: Path) -> None:
    for root in (None, tmp_path / "absent"):
        sections = demo_sections(tmp_path, data_root=root, seed=0, progress=_noop)
        assert len(sections) == 1
        assert sections[0].blocks == [sections[0].blocks[0]]
        assert "were not found" in str(sections[0].blocks[0])
        assert "skipped" in str(sections[0].blocks[0])
    assert not (tmp_path / "traces.json").exists()

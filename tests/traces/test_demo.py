"""The traces part of the demo, through its audit contract: one table over the public
files, or a recorded skip."""

from __future__ import annotations

import json
from pathlib import Path

from tests.traces._counts import tau2_counts
from toolaudit.audits import load_audit, run_audit
from toolaudit.report import Table


def test_traces_audit_table_covers_every_public_file(shared_data: Path, tmp_path: Path) -> None:
    result = run_audit("traces", tmp_path, seed=0, data_root=shared_data)
    (section,) = load_audit("traces").sections(result)
    table = next(b for b in section.blocks if isinstance(b, Table))
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
    run_audit("traces", tmp_path, seed=0, data_root=shared_data)
    assert (tmp_path / "traces.json").read_bytes() == first


def test_traces_audit_without_data_root_records_the_skip(tmp_path: Path) -> None:
    for i, root in enumerate((None, tmp_path / "absent")):
        result = run_audit("traces", tmp_path / f"out{i}", seed=0, data_root=root)
        assert result.files == []
        assert [(f.kind, f.what) for f in result.meta.fallbacks] == [
            ("skipped_part", "traces.public_files")
        ]
        (section,) = load_audit("traces").sections(result)
        assert not any(isinstance(b, Table) for b in section.blocks)

"""The harness: config hashes, resumable appends, byte-identical records."""

from __future__ import annotations

from pathlib import Path

import pytest

from toolaudit.errors import ConfigError, TraceFormatError
from toolaudit.probes import run_probe_study
from toolaudit.probes.harnesses.researchops._harness import RunSpec, study_specs

SMALL = {"tasks": [0, 1, 2, 3], "n_seeds": 2}


def test_config_hash_is_stable_and_distinct() -> None:
    a = RunSpec(3, "careful", "reformat", 1)
    assert a.config_hash() == RunSpec(3, "careful", "reformat", 1).config_hash()
    hashes = {s.config_hash() for s in study_specs(n_seeds=3)}
    assert len(hashes) == 25 * 5 * 7 * 3


def test_study_specs_unknown_policy_raises() -> None:
    with pytest.raises(ConfigError, match="invalid policy='nope'"):
        study_specs(policies=["nope"])


def test_run_probe_study_same_seed_gives_byte_identical_records(tmp_path: Path) -> None:
    a = run_probe_study(tmp_path / "a", **SMALL)
    b = run_probe_study(tmp_path / "b", **SMALL, n_jobs=2)
    assert a.read_bytes() == b.read_bytes()
    assert len(a.read_text().splitlines()) == 4 * 5 * 7 * 2


def test_run_probe_study_different_seed_changes_records(tmp_path: Path) -> None:
    a = run_probe_study(tmp_path / "a", **SMALL)
    b = run_probe_study(tmp_path / "b", **SMALL, seed=1)
    assert a.read_bytes() != b.read_bytes()


def test_run_probe_study_resumes_after_interruption(tmp_path: Path) -> None:
    full = run_probe_study(tmp_path / "full", **SMALL).read_bytes()
    path = tmp_path / "cut" / "records.jsonl"
    path.parent.mkdir()
    lines = full.splitlines(keepends=True)
    # An interrupted study: half the records, then a half-written line.
    path.write_bytes(b"".join(lines[: len(lines) // 2]) + lines[len(lines) // 2][:40])
    seen: list[tuple[int, int]] = []
    run_probe_study(tmp_path / "cut", **SMALL, progress=lambda d, t, _: seen.append((d, t)))
    assert path.read_bytes() == full
    assert seen[0] == (len(lines) // 2, len(lines))


def test_run_probe_study_rejects_foreign_records(tmp_path: Path) -> None:
    (tmp_path / "records.jsonl").write_text('{"task_id": "x"}\n')
    with pytest.raises(TraceFormatError, match="line 1, field 'source.config_hash'"):
        run_probe_study(tmp_path, **SMALL)


class _Lazy:
    """A custom agent: submits the first listed candidate after one search."""

    name = "lazy"

    def run(self, view, call) -> str:
        import json

        search = next(t.name for t in view.tools if "search" in t.name or "find" in t.name)
        submit = next(t.name for t in view.tools if "report" in t.name)
        text, err = call(search, {"query": "x"})
        obj = {} if err else json.loads(text)
        obj = obj.get("result", obj)
        first = obj["candidates"][0]["id"] if "candidates" in obj else None
        call(submit, {"dataset_id": first, "score": 0.0})
        return "done"


def test_run_probe_study_accepts_custom_agent(tmp_path: Path) -> None:
    from toolaudit.probes import analyze_study

    path = run_probe_study(
        tmp_path, tasks=[0, 1], n_seeds=1, policies=["careful", "lazy"], agents={"lazy": _Lazy}
    )
    lines = path.read_text().splitlines()
    assert len(lines) == 2 * 2 * 7
    result = analyze_study(tmp_path, n_boot=50)
    assert result["policies_run"] == ["careful", "lazy"]
    lazy = next(
        c for c in result["cells"] if c["policy"] == "lazy" and c["condition"] == "tool_rename"
    )
    assert lazy["behavior_changed_rate"] == 0.0  # same operations under aliases

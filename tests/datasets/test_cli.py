"""``toolaudit datasets make`` / ``list`` and the demo hook."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from toolaudit.cli.main import main
from toolaudit.datasets._plan import plan_counts


def test_datasets_make_json_prints_counts_per_cell(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "tcr"
    code = main(["datasets", "make", "tcr-shortcut", "--out", str(out), "--scale", "0.01",
                 "--seed", "2", "--json"])  # fmt: skip
    assert code == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["path"] == str(out / "examples.jsonl")
    assert (payload["seed"], payload["scale"]) == (2, 0.01)
    cells = {(c["group"], c["split"]): (c["total"], c["positives"]) for c in payload["cells"]}
    assert cells == {(c.group, c.split): (c.total, c.positives) for c in plan_counts(scale=0.01)}
    assert payload["examples"] == sum(1 for _ in (out / "examples.jsonl").open())


def test_datasets_make_prints_a_count_table(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["datasets", "make", "tcr-shortcut", "--out", str(tmp_path), "--scale", "0.01"])
    text = capsys.readouterr().out
    assert code == 0
    assert "C4" in text and "test" in text and "examples.jsonl" in text


@pytest.mark.parametrize("bad", ["0", "4.5", "-1", "nan", "inf", "abc"])
def test_datasets_make_bad_scale_exits_2_with_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], bad: str
) -> None:
    code = main(["datasets", "make", "tcr-shortcut", "--out", str(tmp_path), "--scale", bad])
    err = capsys.readouterr().err
    assert code == 2
    assert err.count("\n") == 1
    assert f"invalid scale='{bad}'; allowed: a number in (0, 4]" in err
    assert not (tmp_path / "examples.jsonl").exists()


def test_datasets_list_json_names_tcr_shortcut(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["datasets", "list", "--json"]) == 0
    names = [d["name"] for d in json.loads(capsys.readouterr().out)["datasets"]]
    assert names == ["tcr-shortcut"]


def test_datasets_audit_writes_the_benchmark_and_its_counts_table(tmp_path: Path) -> None:
    from toolaudit.audits import load_audit, run_audit
    from toolaudit.datasets._contract import DatasetsConfig

    calls: list[tuple[int, int, str]] = []
    result = run_audit("datasets", tmp_path, config=DatasetsConfig(scale=0.05, seed=0),
                       progress=lambda d, t, lab: calls.append((d, t, lab)))  # fmt: skip
    path = tmp_path / result.path
    n_lines = sum(1 for _ in path.open())
    assert n_lines == sum(c.total for c in plan_counts(scale=0.05))
    assert calls and calls[-1][0] == calls[-1][1] == n_lines
    (section,) = load_audit("datasets").sections(result)
    table = next(b for b in section.blocks if not isinstance(b, str))
    assert [r[:4] for r in table.rows] == [  # type: ignore[union-attr]
        [c.group, c.split, c.total, c.positives] for c in plan_counts(scale=0.05)
    ]


def test_datasets_make_is_byte_identical_across_processes(tmp_path: Path) -> None:
    # Separate interpreters with different hash seeds: nothing may depend on set order.
    import hashlib
    import os
    import subprocess
    import sys

    digests = []
    for hash_seed in ("1", "2"):
        out = tmp_path / hash_seed
        subprocess.run(
            [sys.executable, "-m", "toolaudit.cli.main", "datasets", "make", "tcr-shortcut",
             "--out", str(out), "--scale", "0.01", "--seed", "9"],
            check=True, capture_output=True, env={**os.environ, "PYTHONHASHSEED": hash_seed},
        )  # fmt: skip
        digests.append(hashlib.sha256((out / "examples.jsonl").read_bytes()).hexdigest())
    assert digests[0] == digests[1]


def test_datasets_make_records_strength(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["datasets", "make", "tcr-shortcut", "--out", str(tmp_path), "--scale", "0.01",
                 "--strength", "2.5", "--json"])  # fmt: skip
    assert code == 0
    assert json.loads(capsys.readouterr().out)["strength"] == 2.5


@pytest.mark.parametrize("bad", ["-0.1", "9", "nan", "strong"])
def test_datasets_make_bad_strength_exits_2_with_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], bad: str
) -> None:
    code = main(["datasets", "make", "tcr-shortcut", "--out", str(tmp_path), "--strength", bad])
    err = capsys.readouterr().err
    assert code == 2
    assert err.count("\n") == 1
    assert f"invalid strength='{bad}'; allowed: a number in [0, 8]" in err
    assert not (tmp_path / "examples.jsonl").exists()


def test_strength_fallback_only_for_a_non_default_strength() -> None:
    from toolaudit.datasets import SMALL_STRENGTH, STRENGTH, strength_fallback

    assert strength_fallback(STRENGTH) is None
    relaxed = strength_fallback(SMALL_STRENGTH)
    assert relaxed is not None and relaxed.kind == "relaxed_parameter"
    assert relaxed.what == "tcr-shortcut.strength" and "3" in relaxed.detail


def test_datasets_audit_records_a_non_default_strength_as_a_fallback(tmp_path: Path) -> None:
    from toolaudit.datasets import DATASETS_AUDIT, DatasetsConfig

    result = DATASETS_AUDIT.run(DatasetsConfig(scale=0.01, strength=3.0), out_dir=tmp_path)
    assert [(f.kind, f.what) for f in result.meta.fallbacks] == [
        ("relaxed_parameter", "tcr-shortcut.strength")
    ]
    assert result.dataset["strength"] == 3.0 and result.meta.config["strength"] == 3.0
    default = DATASETS_AUDIT.run(DatasetsConfig(scale=0.01), out_dir=tmp_path / "d")
    assert default.meta.fallbacks == []

"""Redaction across training seeds (issue 55, item 1): the summary of runs grouped by the
data they scored, read from the committed results/redact-lm run and copies of it."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from toolaudit.errors import DataError
from toolaudit.redaction import redaction_seeds, seeds_markdown

RUN = Path(__file__).resolve().parents[2] / "results" / "redact-lm" / "redaction"


def _copy(tmp: Path, name: str, shift: float) -> Path:
    """The committed run with every AUROC moved by ``shift`` (a second 'seed')."""
    doc = json.loads((RUN / "redaction.json").read_text())
    for v in doc["variants"]:
        v["auroc"] = v["auroc"] - shift
        v["by_group"] = {k: x - shift for k, x in v["by_group"].items()}
    out = tmp / name
    out.mkdir()
    (out / "redaction.json").write_text(json.dumps(doc))
    return out


def test_runs_on_one_dataset_give_mean_spread_and_verdicts(tmp_path: Path) -> None:
    runs = [RUN, _copy(tmp_path, "b", 0.1), _copy(tmp_path, "c", 0.2)]
    summary = redaction_seeds(runs)
    (ds,) = summary["datasets"]
    assert ds["n_runs"] == 3 and ds["data"] == "tcr-s0.05-str8-seed0"
    original = next(v for v in ds["variants"] if v["name"] == "original")
    assert original["auroc"]["mean"] == pytest.approx(0.9)
    assert original["auroc"]["sd"] == pytest.approx(0.1)
    assert (original["auroc"]["min"], original["auroc"]["max"]) == pytest.approx((0.8, 1.0))
    assert original["by_group"]["C3"]["mean"] == pytest.approx(0.9)
    verdicts = {v["name"]: v.get("verdict") for v in ds["variants"]}
    assert verdicts == {
        "original": None,
        "pdb_id": "drops on every seed",
        "peptide": "no drop on any seed",
        "format": "drops on every seed",
    }
    text = seeds_markdown(summary)
    assert "| original | 0.8136 | 0.9000 ± 0.1000 [0.8000, 1.0000]" in text
    assert "3 training seeds; 245 test rows, 13 positive" in text


def test_a_baseline_joins_the_data_it_was_trained_on(tmp_path: Path) -> None:
    digest = json.loads((RUN / "redaction.json").read_text())["meta"]["inputs"]["data"]["sha256"]
    base = tmp_path / "no-trace"
    base.mkdir()
    (base / "training.json").write_text(
        json.dumps(
            {
                "data": {"name": "tcr-s0.05-str8-seed0", "sha256": digest},
                "eval": {"auroc": 0.51, "ci95": [0.4, 0.6]},
            }
        )
    )
    ds = redaction_seeds([RUN], baselines=[base])["datasets"][0]
    assert ds["no_evidence"]["auroc"]["mean"] == pytest.approx(0.51)
    other = tmp_path / "other"
    shutil.copytree(base, other)
    (other / "training.json").write_text(json.dumps({"data": {"sha256": "ab" * 32}}))
    with pytest.raises(DataError, match="names no data any run scored"):
        redaction_seeds([RUN], baselines=[other])


def test_missing_or_broken_files_are_named(tmp_path: Path) -> None:
    with pytest.raises(DataError, match="redaction.json"):
        redaction_seeds([tmp_path])
    (tmp_path / "redaction.json").write_text("{")
    with pytest.raises(DataError, match="not JSON"):
        redaction_seeds([tmp_path])


def test_a_model_at_chance_makes_every_class_not_testable(tmp_path: Path) -> None:
    doc = json.loads((RUN / "redaction.json").read_text())
    for v in doc["variants"]:
        v["auroc"], v["ci95"] = 0.5, [0.5, 0.5]
        if v["name"] != "original":
            v["delta"], v["delta_ci95"] = 0.0, [0.0, 0.0]
    (tmp_path / "redaction.json").write_text(json.dumps(doc))
    ds = redaction_seeds([tmp_path])["datasets"][0]
    assert {v.get("verdict") for v in ds["variants"] if v["name"] != "original"} == {
        "not testable: the original is at chance on every seed"
    }

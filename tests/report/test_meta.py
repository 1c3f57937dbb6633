"""Every results file is versioned: ``run_metadata`` is the JSON form of ``ResultMeta``
and ``write_results`` adds ``schema_version`` to a payload with ``meta``."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from toolaudit.report import (
    RESULTS_SCHEMA_VERSION,
    Fallback,
    ResultMeta,
    record_fallback,
    run_metadata,
    write_results,
)


def test_run_metadata_validates_as_result_meta_with_its_fallbacks() -> None:
    fb = Fallback(kind="truncation", what="faults.context", detail="cut to 2,048 tokens", count=3)
    meta = run_metadata(command="x", seed=1, config={"a": 1}, fallbacks=[fb])
    parsed = ResultMeta.model_validate(meta)
    assert parsed.schema_version == RESULTS_SCHEMA_VERSION and parsed.fallbacks == [fb]
    assert meta["fallbacks"][0]["count"] == 3


def test_write_results_adds_schema_version_and_is_stable(tmp_path: Path) -> None:
    payload = {"rows": [float("nan"), 1.5], "meta": run_metadata(command="x", seed=0, config={})}
    a = write_results(tmp_path / "a.json", payload).read_bytes()
    b = write_results(tmp_path / "b.json", payload).read_bytes()
    doc = json.loads(a)
    assert a == b and doc["schema_version"] == RESULTS_SCHEMA_VERSION
    assert doc["rows"] == [None, 1.5]
    plain = json.loads(write_results(tmp_path / "c.json", {"rows": []}).read_text())
    assert "schema_version" not in plain  # only results files (with meta) are versioned


def test_record_fallback_logs_a_warning(caplog: pytest.LogCaptureFixture) -> None:
    got: list[Fallback] = []
    with caplog.at_level(logging.WARNING):
        record_fallback(got, Fallback(kind="empty_pool", what="leakage.pool", detail="empty"))
    assert len(got) == 1
    assert "Fallback [empty_pool] leakage.pool: empty" in caplog.text

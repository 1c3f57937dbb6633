"""End to end on the shipped mini domain: faults.json keys, the action distribution,
resumption, analysis without the model, and the report. Every test runs on a tiny
deterministic model in seconds (``tiny``) and, with --runslow, on the embedded Qwen
(``qwen``), which is also the oracle for what the numbers say."""

from __future__ import annotations

import json

import pytest

from toolaudit.cli.main import main
from toolaudit.faults import FaultsConfig, report_section
from toolaudit.faults._run import run_faults
from toolaudit.report import with_fallbacks, write_results

ROW_KEYS = {
    "task",
    "arm",
    "k",
    "s0",
    "s1",
    "g",
    "entropy",
    "leading_action",
    "agrees_reference",
    "p_reread",
    "p_write",
    "p_reply",
    "pi",
    "p_unrecognised",
}


@pytest.fixture(scope="module", params=["tiny", pytest.param("qwen", marks=pytest.mark.slow)])
def mini_run(request, tmp_path_factory):
    lm = request.getfixturevalue(f"{request.param}_lm")
    out = tmp_path_factory.mktemp(f"faults-{request.param}")
    config = FaultsConfig(domain="mini", arms=("clean", "failed"), k_max=1, tasks=1)
    first = run_faults(out, config=config, model=lm)
    line1 = (out / "rows.jsonl").read_text().splitlines()[0]
    second = run_faults(out, config=config, model=lm)
    write_results(out / "faults.json", second)  # as the CLI does: the file is written once
    return out, first, second, line1, lm, request.param


def test_run_writes_rows_with_stable_keys(mini_run):
    out, first, _, _, _, kind = mini_run
    doc = json.loads((out / "faults.json").read_text())
    assert set(doc) >= {"meta", "rows", "summary", "counts", "skipped"}
    assert doc["meta"]["seed"] == 0 and doc["meta"]["config"]["arms"] == ["clean", "failed"]
    rows = doc["rows"]
    assert {(r["arm"], r["k"]) for r in rows} == {
        ("clean", 0),
        ("clean", 1),
        ("failed", 0),
        ("failed", 1),
    }
    assert all(ROW_KEYS <= set(r) for r in rows)
    for r in rows:
        assert abs(r["g"] - (r["s1"] - r["s0"])) < 1e-12
        assert abs(r["p_reply"] + r["p_call"] - 1) < 1e-9
        assert len(r["pi"]) == 17 and abs(sum(r["pi"].values()) - 1) < 1e-9
        assert 0.0 <= r["p_unrecognised"] <= 1.0
        assert r["leading_action"] == max(r["pi"], key=r["pi"].get)
    by = {(r["arm"], r["k"]): r for r in rows}
    # k >= 1: the scored return is the same bytes in both arms, so S0 is identical
    assert by[("clean", 1)]["s0"] == by[("failed", 1)]["s0"]
    if kind == "qwen":  # what the numbers say needs the real model
        # an error string is far less probable under the schema alone than the record
        assert by[("failed", 0)]["s0"] > by[("clean", 0)]["s0"]
    assert doc["summary"]["cells"][0]["arm"] == "failed"
    # the mini domain is a recorded fallback, and the census covers its four tasks
    assert doc["meta"]["fallbacks"][0]["what"] == "faults.domain"
    assert doc["counts"]["qualifying_tasks"] == 4 and doc["counts"]["site_dropouts"] == {}


def test_rerun_resumes_without_rescoring(mini_run):
    out, first, second, line1, _, _ = mini_run
    lines = (out / "rows.jsonl").read_text().splitlines()
    assert len(lines) == 1 and lines[0] == line1
    assert second["rows"] == first["rows"]


def test_rerun_with_other_options_is_refused(mini_run):
    out, lm = mini_run[0], mini_run[4]
    from toolaudit.errors import ConfigError

    with pytest.raises(ConfigError, match="--arms"):
        run_faults(out, config=FaultsConfig(domain="mini", arms=("clean",), k_max=0), model=lm)


def test_report_section_has_table_and_two_figures(mini_run):
    sec = report_section(mini_run[1])
    kinds = [type(b).__name__ for b in sec.blocks]
    # Table I, then Table I at the site / along the trajectory / inside the inconsistent
    # family, each beside the seed's; Figures 1-2
    assert kinds.count("Table") == 4 and kinds.count("Figure") == 2
    texts = [b for b in sec.blocks if isinstance(b, str)]
    # fallbacks are listed once, as the table with_fallbacks puts above the section
    assert not any(t.startswith("Fallback [") for t in texts)
    (table,) = with_fallbacks([sec], mini_run[1]["meta"]["fallbacks"], title="F")[0].blocks[:1]
    assert ["stand_in_data", "faults.domain"] == table.rows[0][:2]
    assert any(t.startswith("4 of 4 tasks qualify") for t in texts)
    task = mini_run[1]["rows"][0]["task"]
    assert f"The findings rest on 1 task(s): {task}." in texts  # replay: no viewer command


def test_report_with_readings_at_k0_only_draws_no_trajectory_figure(mini_run):
    """Issue 26: Figure 2 was a column of points when only k = 0 ran; it is left out
    with a sentence saying why."""
    doc = mini_run[1]
    site_only = {
        **doc,
        "rows": [r for r in doc["rows"] if r["k"] == 0],
        "summary": {**doc["summary"], "cells": [c for c in doc["summary"]["cells"] if c["k"] == 0]},
    }
    sec = report_section(site_only)
    assert [b.caption[:8] for b in sec.blocks if type(b).__name__ == "Figure"] == ["Figure 1"]
    assert any(
        isinstance(b, str) and b.startswith("Figure 2 (the readings along") for b in sec.blocks
    )


def test_tasks_line_names_the_viewer_of_a_source_file(shared_data):
    from toolaudit.faults._report import tasks_line

    src = shared_data / "tau2/simulations/retail__gpt-4.1__user-gpt-4.1__test40x1.json"
    payload = {"rows": [{"task": "3"}, {"task": "3"}, {"task": "7"}],
               "meta": {"config": {"source": str(src)}}}  # fmt: skip
    assert tasks_line(payload) == (
        f"The findings rest on 2 task(s): 3, 7. Open the recorded runs with "
        f"`tau2 view --file {src}`."
    )
    assert tasks_line({"rows": [], "meta": {}}) is None


def test_cli_help_has_example(capsys):
    assert main(["faults", "run", "--help"]) == 0
    assert "Example:" in capsys.readouterr().out


def test_analyze_rebuilds_the_same_results_without_the_model(mini_run):
    from toolaudit.faults import analyze

    out, first = mini_run[0], mini_run[1]
    rebuilt = analyze(out)
    assert rebuilt["rows"] == first["rows"]
    from toolaudit.report._meta import _clean  # NaN -> None, as written to disk

    assert _clean(rebuilt["summary"]) == _clean(first["summary"])


@pytest.mark.slow
def test_faults_demo_audit_on_retail_writes_results(tmp_path, shared_data):
    from toolaudit.audits import run_audit
    from toolaudit.faults._contract import DEMO_ARMS, DEMO_TASKS

    seen = []
    run_audit("faults", tmp_path, seed=0, data_root=shared_data,
              progress=lambda d, t, label: seen.append(d))  # fmt: skip
    doc = json.loads((tmp_path / "faults.json").read_text())
    assert not (tmp_path / "faults_run" / "faults.json").exists()  # written once
    assert doc["counts"]["tasks_scored"] == DEMO_TASKS
    assert doc["meta"]["config"]["model"] == "embedded:qwen"
    assert {r["arm"] for r in doc["rows"]} == set(DEMO_ARMS)
    assert seen and seen[-1] == DEMO_TASKS


@pytest.mark.slow
def test_two_worker_processes_give_the_in_process_rows(mini_run, tmp_path):
    # Two 1-thread workers, each loading the model once: the same rows as the in-process
    # run (up to float rounding between thread counts), one rows.jsonl line per task.
    first, kind = mini_run[1], mini_run[5]
    if kind != "qwen":
        pytest.skip("worker processes load config.model (the real Qwen): its case covers it")
    config = FaultsConfig(domain="mini", arms=("clean", "failed"), k_max=1, tasks=1, workers=2)
    got = run_faults(tmp_path, config=config)
    assert len((tmp_path / "rows.jsonl").read_text().splitlines()) == 1
    assert [(r["arm"], r["k"]) for r in got["rows"]] == [(r["arm"], r["k"]) for r in first["rows"]]
    for a, b in zip(got["rows"], first["rows"], strict=True):
        assert a["leading_action"] == b["leading_action"]
        for key in ("s0", "s1", "g", "entropy", "p_reply"):
            assert abs(a[key] - b[key]) < 1e-4

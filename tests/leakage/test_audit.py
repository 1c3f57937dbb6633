"""run_leakage end to end: the planted carrier is found, bad input is reported."""

from __future__ import annotations

import json

import numpy as np
import pytest

from toolaudit.errors import DataError
from toolaudit.leakage import DilutionConfig, LeakageConfig, run_leakage
from toolaudit.stats import auroc
from toolaudit.traces import Example, ToolSection

from .conftest import adversarial_examples


@pytest.fixture(scope="module")
def planted():
    return run_leakage(
        adversarial_examples(n=160, seed=1),
        LeakageConfig(n_boot=200, dilution=DilutionConfig(k_values=(0, 1, 3), n_seeds=2)),
    )


def test_run_leakage_localizes_planted_id_to_its_tool(planted):
    table = planted.table("char_wb_3_5")
    assert table["t2"] > 0.7
    assert table["t2"] > max(table[t] for t in ("t0", "t1", "t3")) + 0.1
    rows = {(r.scope, r.features): r for r in planted.scopes}
    lo, hi = rows[("t2", "char_wb_3_5")].summary.ci95
    assert lo < table["t2"] < hi


def test_run_leakage_provenance_names_field_and_class(planted):
    feats = [
        f
        for f in planted.provenance["features"]
        if f["scope"] == "t2" and f["features"] == "char_wb_3_5"
    ]
    assert feats and feats[0]["fields"][0] == {
        "tool": "t2",
        "field": "path",
        "count": feats[0]["fields"][0]["count"],
    }
    # the runs named beside each n-gram are real ids whose t2 section holds the n-gram
    by_id = {e.id: e for e in adversarial_examples(n=160, seed=1)}
    ids = feats[0]["example_ids"]
    assert 1 <= len(ids) <= 3
    for i in ids:
        section = next(t for t in by_id[i].tools if t.name == "t2")
        assert feats[0]["term"].strip().lower() in section.content.lower()
    top = planted.provenance["classes"][0]
    assert top["kind"] == "regex" and top["pattern"] == r"file_(\d+)\.csv"
    assert top["support"] == 160
    assert planted.prefix_lookup["class"] == "t2.path"
    assert planted.prefix_lookup["rows"][0]["chars"] == 1
    assert planted.prefix_lookup["rows"][0]["auroc"] > 0.75


def test_run_leakage_dilution_shapes(planted):
    dil = planted.dilution
    assert dil["carrier"] == "t2"
    assert [p["size"] for p in dil["real"]] == [1, 2, 3, 4]
    assert dil["real"][0]["auroc"] == planted.table("char_wb_3_5")["t2"]
    assert dil["real"][-1]["auroc"] == planted.table("char_wb_3_5")["full"]
    pts = {p["k"]: p for p in dil["synthetic"]["points"]}
    assert pts[0]["sd"] == 0.0 and pts[0]["mean"] == dil["real"][0]["auroc"]
    assert pts[3]["mean"] < pts[0]["mean"]
    assert dil["synthetic"]["pool_tools"] == ["t0", "t1", "t3"]


def test_run_leakage_json_is_deterministic(planted):
    again = run_leakage(
        adversarial_examples(n=160, seed=1),
        LeakageConfig(n_boot=200, dilution=DilutionConfig(k_values=(0, 1, 3), n_seeds=2)),
    )
    assert json.dumps(again.as_json(), sort_keys=True, default=str) == json.dumps(
        planted.as_json(), sort_keys=True, default=str
    )


def _tiny(labels, groups, splits, tools=None):
    rows = []
    for i, (lab, g, s) in enumerate(zip(labels, groups, splits, strict=True)):
        secs = tools[i] if tools else [("a", f"alpha {i % 3} beta"), ("b", f"v{lab} gamma")]
        rows.append(
            Example(
                id=str(i),
                label=lab,
                group=g,
                split=s,
                tools=[ToolSection(name=n, content=c) for n, c in secs],
            )
        )
    return rows


def test_run_leakage_one_class_group_is_undefined_not_a_crash():
    labels = [0, 1] * 6 + [0, 0, 0, 1, 0, 1]
    groups = ["F"] * 12 + ["E1", "E1", "E1", "E2", "E2", "E2"]
    splits = ["train"] * 12 + ["test"] * 6
    res = run_leakage(_tiny(labels, groups, splits), LeakageConfig(n_boot=50, dilution=None))
    row = res.scopes[0]
    assert np.isnan(row.summary.by_group["E1"]["auroc"])
    assert not np.isnan(row.summary.by_group["E2"]["auroc"])
    assert any("E1" in w and "one class" in w for w in res.warnings)


def test_run_leakage_says_when_cv_folds_is_not_used():
    """--cv-folds only shapes cross-validation on one pool; with a train/test split it is
    not used, and the results say so instead of ignoring it without a word."""
    labels = [0, 1] * 9
    groups = [f"g{i % 6}" for i in range(18)]
    splits = ["train"] * 12 + ["test"] * 6
    res = run_leakage(
        _tiny(labels, groups, splits), LeakageConfig(n_boot=50, dilution=None, cv_folds=3)
    )
    assert any(
        w.startswith("cv_folds=3 is not used: the partition is a holdout") for w in res.warnings
    )
    default = run_leakage(_tiny(labels, groups, splits), LeakageConfig(n_boot=50, dilution=None))
    assert not any("cv_folds" in w for w in default.warnings)


def test_run_leakage_missing_tool_and_small_data_warn():
    tools = [[("a", f"alpha {i}")] + ([("b", "beta gamma")] if i % 2 else []) for i in range(8)]
    labels = [0, 1, 0, 1, 0, 1, 0, 1]
    res = run_leakage(
        _tiny(labels, ["g"] * 8, ["train"] * 2 + ["test"] * 6, tools),
        LeakageConfig(n_boot=50, dilution=None),
    )
    assert any("'b' is absent from 4 of 8" in w for w in res.warnings)
    assert any("used min_df=1" in f.detail and f.kind == "relaxed_parameter" for f in res.fallbacks)


def test_run_leakage_fit_partition_with_one_class_raises():
    with pytest.raises(DataError, match="fit partition .* one class only"):
        run_leakage(
            _tiny([0, 0, 0, 1], ["g"] * 4, ["train"] * 3 + ["test"]), LeakageConfig(dilution=None)
        )


def test_leakage_sections_render_tables_and_figures(planted):
    from toolaudit.leakage import leakage_sections
    from toolaudit.report import Figure, Table
    from toolaudit.report._document import render_markdown

    sec = leakage_sections(planted.as_json())[0]
    tables = [b for b in sec.blocks if isinstance(b, Table)]
    figures = [b for b in sec.blocks if isinstance(b, Figure)]
    assert len(figures) == 4 and all(f.png.startswith(b"\x89PNG") for f in figures)
    fig_captions = [f.caption for f in figures]
    assert any(c.startswith("AUROC per evaluation group") for c in fig_captions)
    assert "ROC curves: best tool against the full trace" in fig_captions
    assert sec.blocks[0] == planted.verdict["sentence"]
    captions = [t.caption for t in tables]
    # the intervals the verdict rule reads (issue 44: one figure per finding)
    level = planted.finding().details["family_level"]
    assert captions[0] == f"AUROC by scope and feature set [family-wise 95% CI, {level:.2%} each]"
    assert any(c.startswith("Candidate token classes") for c in captions)
    assert any(c.startswith("Dilution, real-tool") for c in captions)
    assert "| t2 |" in render_markdown("x", [sec])


@pytest.mark.slow
def test_leakage_demo_audit_writes_leakage_json(tmp_path):
    from toolaudit.audits import load_audit, run_audit
    from toolaudit.leakage._contract import DEMO_DILUTION

    result = run_audit("leakage", tmp_path, seed=0, data_root=None)
    doc = json.loads((tmp_path / "leakage.json").read_text())
    assert doc["scopes"] and doc["meta"]["seed"] == 0
    assert doc["dilution"]["synthetic"]["k_values"] == list(DEMO_DILUTION.k_values)
    assert load_audit("leakage").sections(result)[0].title.startswith("Leakage audit")


def test_sweeps_reuse_the_scope_tables_fits(monkeypatch):
    """The real sweep's endpoints (the carrier; every tool = the full trace) are scope
    table rows and are not fitted again; only its middle points and the synthetic K > 0
    points are new designs."""
    from toolaudit.leakage import FEATURE_SETS
    from toolaudit.leakage._engine import PT2DEngine

    built = []
    design = PT2DEngine.design

    def counting(self, counts, spec, fit, ev, **kw):
        built.append(spec.name)
        return design(self, counts, spec, fit, ev, **kw)

    monkeypatch.setattr(PT2DEngine, "design", counting)
    res = run_leakage(
        adversarial_examples(n=160, seed=1),
        LeakageConfig(
            features=(FEATURE_SETS["char_wb_3_5"],),
            n_boot=20,
            dilution=DilutionConfig(k_values=(0, 1), n_seeds=1),
        ),
    )
    n_tools = len(res.tools)
    assert [p["size"] for p in res.dilution["real"]] == list(range(1, n_tools + 1))
    # scope table (full + each tool) + the real sweep's middle points + K = 1
    assert len(built) == (1 + n_tools) + (n_tools - 2) + 1


def test_scores_out_holds_each_rows_evaluation_scores():
    examples = adversarial_examples(n=120, seed=2)
    got: dict = {}
    res = run_leakage(examples, LeakageConfig(n_boot=50, dilution=None), scores_out=got)
    assert set(got) == {(r.scope, r.features) for r in res.scopes}
    y = np.array([e.label for e in examples])
    for r in res.scopes:
        arr = got[(r.scope, r.features)]
        ok = ~np.isnan(arr)
        assert ok.sum() == r.summary.n
        assert auroc(y[ok], arr[ok]) == r.summary.auroc

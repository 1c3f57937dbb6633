"""The headline claim, guarded by default: on the controlled benchmark at small scale,
PT2D ranks the planted carrier (tool 3, char_wb 3-5) first, reliably above chance."""

from __future__ import annotations

import pytest

from toolaudit.datasets import make_tcr_shortcut
from toolaudit.leakage import LeakageConfig, run_leakage
from toolaudit.leakage._features import FEATURE_SETS


@pytest.fixture(scope="module")
def headline():
    examples = [e for e in make_tcr_shortcut(scale=0.1, seed=0) if e.split in ("train", "test")]
    cfg = LeakageConfig(features=(FEATURE_SETS["char_wb_3_5"],), n_boot=500, dilution=None)
    return run_leakage(examples, cfg)


def test_tcr_shortcut_tool3_char35_is_top_tool_above_chance(headline):
    rows = {r.scope: r for r in headline.scopes}
    tools = {s: r for s, r in rows.items() if s != "full"}
    top = max(tools, key=lambda s: tools[s].summary.auroc)
    assert top == "thermompnn_ddg"
    assert tools[top].summary.ci95[0] > 0.5


def test_tcr_shortcut_top_class_is_the_planted_filename_id(headline):
    top = headline.provenance["classes"][0]
    assert top["name"] == "thermompnn_ddg.thermompnn_csv_path"
    assert "ThermoMPNN_inference_" in top["pattern"]

"""``toolaudit leakage`` on a JSONL file and on a real tau2-bench results file."""

from __future__ import annotations

import json

from toolaudit.cli.main import main
from toolaudit.traces import write_jsonl

from .conftest import adversarial_examples


def test_cli_leakage_writes_stable_keys(tmp_path, capsys):
    data = tmp_path / "examples.jsonl"
    write_jsonl(data, adversarial_examples(n=120, seed=2))
    out = tmp_path / "out"
    argv = [
        "leakage",
        str(data),
        "--out",
        str(out),
        "--n-boot",
        "100",
        "--dilution-k",
        "0",
        "1",
        "--dilution-seeds",
        "2",
        "--json",
    ]
    assert main(argv) == 0
    printed = json.loads(capsys.readouterr().out)
    doc = json.loads((out / "leakage.json").read_text())
    assert {"scopes", "dilution", "provenance", "prefix_lookup", "meta"} <= set(doc)
    assert len(doc["scopes"]) == 5 * 3 == len(printed["scopes"])
    row = doc["scopes"][0]
    assert {"scope", "features", "auroc", "ci95", "by_group"} <= set(row)
    assert {r["features"] for r in doc["scopes"]} == {"word_1_2", "char_wb_2_5", "char_wb_3_5"}
    assert {r["scope"] for r in doc["scopes"]} == {"full", "t0", "t1", "t2", "t3"}
    assert doc["meta"]["seed"] == 0 and doc["meta"]["config"]["n_boot"] == 100
    assert (out / "report.html").exists() and "AUROC by scope" in (out / "report.md").read_text()
    first = (out / "leakage.json").read_bytes()
    assert main(argv) == 0
    assert (out / "leakage.json").read_bytes() == first


def test_cli_leakage_bad_selection_exits_2(tmp_path, capsys):
    data = tmp_path / "examples.jsonl"
    write_jsonl(data, adversarial_examples(n=30))
    code = main(["leakage", str(data), "--out", str(tmp_path / "o"), "--eval", "split=nope"])
    assert code == 2
    assert "eval partition (split=nope) selects no examples" in capsys.readouterr().err


def test_cli_leakage_runs_on_tau2_results_with_grouped_cv(shared_data, tmp_path):
    src = shared_data / "tau2" / "simulations" / "retail__gpt-4.1__user-gpt-4.1__test40x1.json"
    out = tmp_path / "tau2"
    code = main(
        [
            "leakage",
            str(src),
            "--out",
            str(out),
            "--no-dilution",
            "--n-boot",
            "100",
            "--features",
            "char_wb_3_5",
            "--scopes",
            "full",
            "get_order_details",
        ]
    )
    assert code == 0
    doc = json.loads((out / "leakage.json").read_text())
    assert doc["partition"]["mode"] == "grouped_cv"
    assert doc["data"]["examples"] == 40
    assert [r["scope"] for r in doc["scopes"]] == ["full", "get_order_details"]
    assert any("one class only" in w for w in doc["warnings"])

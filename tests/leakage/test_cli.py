"""``toolaudit leakage`` on a JSONL file and on a real tau2-bench results file."""

from __future__ import annotations

import json

import pytest

from toolaudit.cli.main import main
from toolaudit.traces import write_jsonl

from .conftest import adversarial_examples
from .figures import headline_mismatches


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


def test_cli_leakage_runs_on_tau2_results_with_grouped_cv(shared_data, tmp_path, capsys):
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
    # the runs a finding rests on, one command away (issue 26)
    view = f"tau2 view --file {src}"
    assert doc["data"]["view"] == [view]
    assert (
        f"rests on the 40 runs of the input; open their transcripts with `{view}`"
        in (out / "report.md").read_text()
    )
    assert [r["scope"] for r in doc["scopes"]] == ["full", "get_order_details"]
    assert any("one class only" in w for w in doc["warnings"])
    # Issue 44: the full trace lies far below chance on these 40 runs; the printed summary
    # and the report say so, with the interval it is read from, and what it means
    full = doc["verdict"]["evidence"]["details"]["full"]["char_wb_3_5"]
    assert full["ci"][1] < 0.5
    below = f"the full trace among them (char_wb_3_5: {full['auroc']:.3f} [{full['ci'][0]:.3f}, "
    printed = capsys.readouterr().out
    report = (out / "report.md").read_text()
    for text in (printed, report):
        assert "Below chance: " in text and below in text
        assert "in the direction opposite to the one the classifier learned" in text
    # one figure per finding: line, card, cited table row and verdict sentence agree
    assert headline_mismatches(doc["verdict"], report) == []


def test_cli_leakage_word_only_with_dilution_succeeds(shared_data, tmp_path):
    """Issue 15: no char_wb set selected and dilution on used to end in KeyError."""
    src = shared_data / "tau2" / "simulations" / "retail__gpt-4.1__user-gpt-4.1__test40x1.json"
    out = tmp_path / "word"
    argv = ["leakage", str(src), "--out", str(out), "--features", "word_1_2", "--n-boot", "100"]
    argv += ["--dilution-k", "0", "1", "--dilution-seeds", "1"]
    assert main(argv) == 0
    doc = json.loads((out / "leakage.json").read_text())
    assert doc["dilution"]["features"] == "word_1_2"
    assert doc["verdict"]["kind"] in {"localized", "distributed", "none", "inconclusive"}
    assert doc["data"]["label_source"] == "reward"
    assert any(f["what"] == "leakage.dilution.features" for f in doc["meta"]["fallbacks"])
    report = (out / "report.md").read_text()
    paragraphs = report.split("\n\n")
    header = next(i for i, p in enumerate(paragraphs) if p.startswith("## "))
    # the section opens with its fallbacks (one table), then the verdict sentence
    assert paragraphs[header + 1].startswith("**Fallbacks in force: ")
    prose = [p for p in paragraphs[header + 1 :] if not p.startswith(("**", "|"))]
    assert prose[0].startswith("Verdict: ")  # the section's first sentence
    assert "episode's own reward" in report


@pytest.mark.parametrize(
    ("option", "value", "name"),
    [
        ("--n-jobs", "0", "n-jobs"),
        ("--n-boot", "0", "n-boot"),
        ("--n-boot", "-5", "n-boot"),
        ("--cv-folds", "0", "cv-folds"),
        ("--dilution-k", "-1", "dilution-k"),
        ("--dilution-seeds", "0", "dilution-seeds"),
        ("--threshold", "nan", "threshold"),
        ("--threshold", "inf", "threshold"),
        ("--max-features", "word_1_2=0", "max-features"),
        ("--max-features", "nope=10", "max-features"),
        ("--backend", "ray", "backend"),
        ("--backend", "multiprocessing", "backend"),
        ("--threads", "-1", "threads"),
    ],
)
def test_cli_leakage_bad_option_one_line_exit_2(tmp_path, capsys, option, value, name):
    data = tmp_path / "examples.jsonl"
    write_jsonl(data, adversarial_examples(n=30))
    code = main(["leakage", str(data), "--out", str(tmp_path / "o"), option, value])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1, err
    assert f"invalid {name}=" in err[0] and "allowed" in err[0]
    assert not (tmp_path / "o").exists()


def test_cli_leakage_threshold_outside_rewards_exits_2(shared_data, tmp_path, capsys):
    src = shared_data / "tau2" / "simulations" / "retail__gpt-4.1__user-gpt-4.1__test40x1.json"
    code = main(["leakage", str(src), "--out", str(tmp_path / "o"), "--threshold", "5"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1
    assert "threshold=5.0" in err[0] and "label 0" in err[0]


def test_cli_leakage_fail_on_localized_exit_code(tmp_path):
    from .test_verdict import localized_examples

    data = tmp_path / "examples.jsonl"
    write_jsonl(data, localized_examples(n=240))
    base = ["leakage", str(data), "--out", str(tmp_path / "o"), "--no-dilution"]
    base += ["--features", "char_wb_3_5", "--n-boot", "200"]
    assert main([*base, "--fail-on", "localized"]) == 3
    # one grammar on every command: comma-separated and repeatable
    assert main([*base, "--fail-on", "none,distributed"]) == 0
    assert main([*base, "--fail-on", "none", "--fail-on", "inconclusive,localized"]) == 3


def test_cli_leakage_fail_on_names_only_verdicts(tmp_path, capsys):
    from toolaudit.cli._leakage import LEAKAGE_GATES
    from toolaudit.leakage import VERDICT_KINDS

    assert tuple(LEAKAGE_GATES) == VERDICT_KINDS
    data = tmp_path / "examples.jsonl"
    write_jsonl(data, adversarial_examples(n=30))
    code = main(["leakage", str(data), "--out", str(tmp_path / "o"), "--fail-on", "sometimes"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1
    assert "--fail-on: invalid value 'sometimes'; allowed: localized, distributed" in err[0]
    assert not (tmp_path / "o").exists()

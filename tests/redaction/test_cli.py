"""``toolaudit redact`` end to end through the command line, and its bad-input errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from toolaudit.cli.main import main
from toolaudit.datasets import make_tcr_shortcut
from toolaudit.models import save_pipeline, train_controlled_model
from toolaudit.redaction import RedactionResults
from toolaudit.traces import write_jsonl


@pytest.fixture(scope="module")
def tcr_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("tcr")
    examples = make_tcr_shortcut(scale=0.02, seed=1)
    write_jsonl(d / "examples.jsonl", examples)
    save_pipeline(train_controlled_model(examples, seed=1), d / "frozen.joblib")
    return d


def test_redact_cli_writes_redaction_json_and_reruns_from_cache(
    tcr_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "red"
    argv = ["redact", str(tcr_dir), "--out", str(out), "--model",
            f"sklearn:{tcr_dir / 'frozen.joblib'}", "--limit", "40", "--n-boot", "200", "--json"]  # fmt: skip
    assert main(argv) == 0
    doc = json.loads(capsys.readouterr().out)
    assert [v["name"] for v in doc["variants"]] == ["original", "pdb_id", "peptide", "format"]
    keys = {"name", "auroc", "delta", "delta_ci95", "by_group", "replacements", "residuals",
            "valid_rate"}  # fmt: skip
    assert all(keys <= set(v) for v in doc["variants"])
    assert doc["run"]["calls"] == {"made": 40 * 4 * 10, "cached": 0}
    assert doc["calls"] == {"requests": 40 * 4 * 10}
    assert doc["rows"] == 40 and doc["positives"] == 10  # every test positive at this scale
    assert doc["meta"]["seed"] == 0 and doc["meta"]["config"]["eval"] == {"split": ["test"]}
    assert (out / "report.html").is_file() and (out / "scores.jsonl").is_file()
    first = (out / "redaction.json").read_text()
    assert main(argv) == 0
    again = json.loads(capsys.readouterr().out)
    assert again["run"]["calls"] == {"made": 0, "cached": 40 * 4 * 10}
    # byte-identical: the call counters live in the run log, not in the results
    assert (out / "redaction.json").read_text() == first
    assert RedactionResults.model_validate_json(first).run_calls is None
    log = [json.loads(line)["calls"] for line in (out / "run_log.jsonl").read_text().splitlines()]
    assert log == [doc["run"]["calls"], again["run"]["calls"]]


def test_redact_cli_custom_class_and_generate_scoring(
    tcr_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["redact", str(tcr_dir / "examples.jsonl"), "--out", str(tmp_path), "--model",
            f"sklearn:{tcr_dir / 'frozen.joblib'}", "--limit", "10", "--n-boot", "50",
            "--class", r"csv_id=regex:ThermoMPNN_inference_(\w+)\.csv", "--scoring", "generate",
            "--keep-tools", "thermompnn_ddg,interface_analysis", "--max-tool-lines", "8"]  # fmt: skip
    assert main(argv) == 0
    text = capsys.readouterr().out
    assert "csv_id: AUROC" in text and "calls: 20 made, 0 cached" in text
    doc = json.loads((tmp_path / "redaction.json").read_text())
    csv = doc["variants"][1]
    # the file-name id is also removed from complex_id and the meta copies
    assert csv["name"] == "csv_id" and csv["replacements"] == 10 * 9 and csv["residuals"] == 0
    assert doc["classes"][0]["sources"] == [
        {"kind": "regex", "value": r"ThermoMPNN_inference_(\w+)\.csv"}]  # fmt: skip


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--class", "nosuch"], "invalid --class='nosuch'"),
        (["--eval", "split"], "invalid --eval='split'"),
        (["--eval", "color=red"], "invalid --eval key='color'"),
        (["--scoring", "options", "--keep-tools", "nosuch"], "invalid keep_tools='nosuch'"),
    ],
)
def test_redact_cli_bad_options_exit_2_with_one_line(
    tcr_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], extra: list[str],
    message: str,
) -> None:  # fmt: skip
    argv = ["redact", str(tcr_dir), "--out", str(tmp_path), "--model",
            f"sklearn:{tcr_dir / 'frozen.joblib'}", *extra]  # fmt: skip
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1


def test_redact_cli_malformed_data_names_file_line_and_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "bad.jsonl"
    data.write_text(
        '{"id": "a", "label": 1, "group": "g"}\n{"id": "b", "label": 7, "group": "g"}\n'
    )
    assert main(["redact", str(data), "--out", str(tmp_path / "o"), "--model", "sklearn:x"]) == 2
    err = capsys.readouterr().err
    assert "bad.jsonl, line 2, field 'label'" in err
    assert main(["redact", str(tmp_path / "none"), "--out", str(tmp_path), "--model", "x"]) == 2
    assert "no such file" in capsys.readouterr().err


# Candidates the leakage audit mined on the controlled benchmark (scale 0.2, strength 3,
# seed 0; issue 44): the carrier, and two whose captures are not whole values (``S107``
# of ``cdr3b=S107M``, the ``36`` of ``0.36``), so a plain substring search finds them
# again inside other tokens after redaction.
CARRIER = "thermompnn_ddg.thermompnn_csv_path"
MINED = [
    {"name": CARRIER, "kind": "regex", "pattern": r"ThermoMPNN_inference_(\w+)\.csv"},
    {"name": "mcpas_retrieval.cdr3b", "kind": "regex", "pattern": r"cdr3b\s*[:=]\s*(\S+)"},
    {"name": "interface_analysis.res", "kind": "regex", "pattern": r"rel_buried=0\.(\d+)"},
]


@pytest.fixture(scope="module")
def mined_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("leak")
    doc = {"scopes": [], "provenance": {"features": [], "classes": MINED},
           "prefix_lookup": None, "dilution": None, "partition": {}, "tools": [],
           "meta": {"command": "toolaudit leakage", "seed": 0}}  # fmt: skip
    (d / "leakage.json").write_text(json.dumps(doc))
    return d


def test_redact_cli_class_from_scores_the_carrier_and_reports_refused_classes(
    tcr_dir: Path, mined_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "red"
    argv = ["redact", str(tcr_dir), "--out", str(out), "--model",
            f"sklearn:{tcr_dir / 'frozen.joblib'}", "--limit", "40", "--n-boot", "200",
            "--class-from", str(mined_dir)]  # fmt: skip
    assert main(argv) == 0
    text = capsys.readouterr().out
    doc = json.loads((out / "redaction.json").read_text())
    assert [v["name"] for v in doc["variants"]] == ["original", CARRIER]
    carrier = doc["variants"][1]
    assert carrier["residuals"] == 0 and carrier["replacements"] > 0
    assert carrier["auroc"] is not None and carrier["delta"] is not None  # scored
    refused = doc["residual_check"]["refused"]
    assert set(refused) == {"mcpas_retrieval.cdr3b", "interface_analysis.res"}
    assert all(n > 0 for n in refused.values()) and doc["residual_check"]["residuals"] == 0
    skipped = {f["what"]: f for f in doc["meta"]["fallbacks"] if f["kind"] == "skipped_part"}
    assert set(skipped) == {f"redaction.{n}" for n in refused}
    assert all(skipped[f"redaction.{n}"]["count"] == c for n, c in refused.items())
    for name, count in refused.items():
        assert f"{name}: not scored: {count} occurrences" in text
    assert "redaction.interface_analysis.res" in (out / "report.html").read_text()


def test_redact_cli_run_with_every_class_refused_writes_nothing(
    tcr_dir: Path, mined_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "red"
    base = ["redact", str(tcr_dir), "--out", str(out), "--model",
            f"sklearn:{tcr_dir / 'frozen.joblib'}", "--limit", "20", "--n-boot", "50",
            "--class-from", str(mined_dir)]  # fmt: skip
    assert main([*base, "--class", "interface_analysis.res"]) == 2
    err = capsys.readouterr().err
    assert "refusing to score: redacted values survive (interface_analysis.res:" in err
    assert not out.exists()
    # so a retry with another class into the same folder is not refused as a changed rerun
    assert main([*base, "--class", CARRIER]) == 0
    doc = json.loads((out / "redaction.json").read_text())
    assert [v["name"] for v in doc["variants"]] == ["original", CARRIER]


def test_redact_cli_runs_the_command_the_leakage_verdict_suggests(
    tcr_dir: Path, mined_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import re
    import shlex

    from toolaudit.leakage._wording import verdict_sentence
    from toolaudit.report import Finding

    from ..leakage.test_wording import LOCALIZED

    details = {**LOCALIZED, "carrier_class": CARRIER}
    details["candidates"] = [{**details["candidates"][0], "class": CARRIER},
                             *details["candidates"][1:]]  # fmt: skip
    finding = Finding(name="leakage.verdict", verdict="localized", value=0.962,
                      interval=(0.940, 0.984), n=980, subject="t", details=details)  # fmt: skip
    text = verdict_sentence(finding)
    command = re.search(r"Test whether a model depends on it with `([^`]+)`", text)
    assert command is not None
    filled = {"DATA": str(tcr_dir), "DIR": str(tmp_path / "red"),
              "SPEC": f"sklearn:{tcr_dir / 'frozen.joblib'}", "LEAKAGE_DIR": str(mined_dir)}  # fmt: skip
    argv = [filled.get(w, w) for w in shlex.split(command.group(1))]
    assert argv[:2] == ["toolaudit", "redact"]
    assert main(argv[1:]) == 0
    doc = json.loads((tmp_path / "red" / "redaction.json").read_text())
    assert [v["name"] for v in doc["variants"]] == ["original", CARRIER]

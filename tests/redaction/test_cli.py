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

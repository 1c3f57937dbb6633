"""``toolaudit probe``: exit codes, JSON output, bad input as one line with exit 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from toolaudit.cli.main import main

RETAIL = "tau2/simulations/retail__{}__user-gpt-4.1__test40x1.json"


def test_probe_run_json_writes_records_and_probe_json(tmp_path: Path, capsys) -> None:
    rc = main(
        [
            "probe",
            "run",
            "--suite",
            "researchops",
            "--out",
            str(tmp_path),
            "--seeds",
            "1",
            "--n-boot",
            "100",
            "--json",
        ]
    )
    assert rc == 0
    out = json.loads(capsys.readouterr().out)
    assert out["records"] == 25 * 5 * 7
    assert (tmp_path / "records.jsonl").exists() and (tmp_path / "probe.json").exists()
    careful = next(
        c for c in out["cells"] if c["policy"] == "careful" and c["condition"] == "tool_rename"
    )
    assert careful["vrg"] == pytest.approx(0.25) and careful["vrg_rescored"] == 0.0
    # analyze on the same folder, with a report, gives the same cells
    assert main(["probe", "analyze", str(tmp_path), "--n-boot", "100", "--report"]) == 0
    text = capsys.readouterr().out
    assert "gap-only ranking would misrank" in text
    assert (tmp_path / "report.html").exists()


def test_probe_compare_real_files_json(shared_data: Path, tmp_path: Path, capsys) -> None:
    a, b = shared_data / RETAIL.format("gpt-4.1"), shared_data / RETAIL.format("ft-gpt-4.1-sft")
    assert main(["probe", "compare", str(a), str(b), "--json", "--out", str(tmp_path)]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["paired_tasks"] == 40 and out["mcnemar"]["p"] == 1.0
    assert json.loads((tmp_path / "compare.json").read_text())["meta"]["command"] == "probe compare"


def test_probe_compare_missing_file_exits_2_one_line(tmp_path: Path, capsys) -> None:
    assert main(["probe", "compare", str(tmp_path / "nope.json"), str(tmp_path / "x")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "nope.json" in err[0]


def test_probe_run_bad_suite_exits_2(tmp_path: Path, capsys) -> None:
    assert main(["probe", "run", "--suite", "webshop", "--out", str(tmp_path)]) == 2
    assert "invalid suite='webshop'; allowed: 'researchops'" in capsys.readouterr().err


def test_probe_analyze_without_records_exits_2(tmp_path: Path, capsys) -> None:
    assert main(["probe", "analyze", str(tmp_path)]) == 2
    assert "no probe records" in capsys.readouterr().err


def test_probe_judge_reads_verdict_jsonl(tmp_path: Path, capsys) -> None:
    path = tmp_path / "v.jsonl"
    rows = [
        {
            "judge": j,
            "view": v,
            "repeat": r,
            "record_id": rec,
            "verdict": verdict,
            "native_reward": 1.0,
        }
        for j, verdict in (("A", "pass"), ("B", "fail"))
        for v in ("original", "renamed")
        for r in (0, 1)
        for rec in ("r1", "r2")
    ]
    path.write_text("".join(json.dumps(x) + "\n" for x in rows))
    assert main(["probe", "judge", str(path), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["between"][0]["disagreement"] == 1.0
    assert {j["judge"]: j["native_agreement"] for j in out["judges"]} == {"A": 1.0, "B": 0.0}

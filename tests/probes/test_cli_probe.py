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


@pytest.mark.parametrize("value", ["5", "nan", "0", "-0.1", "inf"])
def test_probe_compare_bad_margin_exits_2(shared_data: Path, value: str, capsys) -> None:
    a, b = shared_data / RETAIL.format("gpt-4.1"), shared_data / RETAIL.format("ft-gpt-4.1-sft")
    assert main(["probe", "compare", str(a), str(b), f"--margin={value}"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "invalid margin=" in err[0] and "(0, 1]" in err[0]


def test_probe_compare_nan_reward_exits_2_naming_record(
    shared_data: Path, tmp_path: Path, capsys
) -> None:
    a = shared_data / RETAIL.format("gpt-4.1")
    doc = json.loads(a.read_text())
    doc["simulations"][5]["reward_info"]["reward"] = float("nan")
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(doc))
    assert main(["probe", "compare", str(a), str(bad)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1
    assert (
        "bad.json" in err[0] and "simulations[5].reward_info.reward" in err[0] and "nan" in err[0]
    )


def test_probe_run_resume_with_other_seeds_refused_before_writing(tmp_path: Path, capsys) -> None:
    base = ["probe", "run", "--out", str(tmp_path), "--tasks", "2", "--n-boot", "50"]
    assert main([*base, "--seeds", "1"]) == 0
    records = (tmp_path / "records.jsonl").read_bytes()
    probe = (tmp_path / "probe.json").read_bytes()
    config = json.loads((tmp_path / "probe.json").read_text())["meta"]["config"]
    assert config["n_seeds"] == 1 and config["seed"] == 0 and config["tasks"] == [0, 1]
    capsys.readouterr()
    assert main([*base, "--seeds", "3"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "made with --seeds=1, but this run has --seeds=3" in err[0]
    assert main([*base, "--seeds", "1", "--seed", "4"]) == 2
    assert "made with --seed=0, but this run has --seed=4" in capsys.readouterr().err
    assert (tmp_path / "records.jsonl").read_bytes() == records
    assert (tmp_path / "probe.json").read_bytes() == probe
    assert main([*base, "--seeds", "1"]) == 0  # the same options resume


def test_probe_analyze_episode_jsonl_exits_2_one_line(
    shared_data: Path, tmp_path: Path, capsys
) -> None:
    from toolaudit.traces import load_episodes, write_jsonl

    write_jsonl(tmp_path / "records.jsonl", load_episodes(shared_data / RETAIL.format("gpt-4.1")))
    assert main(["probe", "analyze", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "line 1, field 'source.config_hash'" in err[0]


def test_probe_run_without_judge_says_the_audit_was_skipped(tmp_path: Path, capsys) -> None:
    args = [
        "probe",
        "run",
        "--out",
        str(tmp_path),
        "--tasks",
        "2",
        "--seeds",
        "1",
        "--n-boot",
        "50",
    ]
    assert main(args) == 0
    assert "judge audit skipped: no --judge-model or --verdicts given" in capsys.readouterr().err
    out = json.loads((tmp_path / "probe.json").read_text())
    assert out["judge"]["simulated"] is False and out["judge"]["n_verdicts"] == 0
    assert out["meta"]["fallbacks"][0]["kind"] == "skipped_part"


def test_probe_run_model_without_llm_policy_exits_2(tmp_path: Path, capsys) -> None:
    assert main(["probe", "run", "--out", str(tmp_path), "--model", "embedded:qwen"]) == 2
    assert "--policies llm" in capsys.readouterr().err
    assert not (tmp_path / "records.jsonl").exists()


def test_probe_compare_report_has_paired_outcome_plot(shared_data: Path, tmp_path: Path) -> None:
    sim = shared_data / "tau2" / "simulations"
    a = sim / "airline__gemini-2.5-flash__user-same__10tasks-x2.json"
    b = sim / "airline__grok-4-fast-reasoning__user-same__41tasks-66sims.json"
    assert main(["probe", "compare", str(a), str(b), "--out", str(tmp_path), "--report"]) == 0
    md = (tmp_path / "report.md").read_text()
    assert "Task by task: pass rate of A and B" in md
    assert "McNemar not computed: several trials per task" in md
    assert "| A | 0.600 | 0.600 |" in md  # pass^1, pass^2 of the 10 × 2 file
    assert (
        md.count("data:image/png") == 0
        and "data:image/png" in (tmp_path / "report.html").read_text()
    )


def test_probe_analyze_on_a_file_exits_2(tmp_path: Path, capsys) -> None:
    f = tmp_path / "records.jsonl"
    f.write_text("")
    assert main(["probe", "analyze", str(f)]) == 2
    assert "not a folder" in capsys.readouterr().err


@pytest.mark.parametrize("value", ["nan", "inf", "5", "0"])
def test_probe_compare_bad_threshold_exits_2(shared_data: Path, value: str, capsys) -> None:
    a = shared_data / RETAIL.format("gpt-4.1")
    assert main(["probe", "compare", str(a), str(a), f"--threshold={value}"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "threshold" in err[0] and value in err[0]


def test_probe_run_conditions_selects_the_repeat_control(tmp_path: Path, capsys) -> None:
    args = ["probe", "run", "--suite", "researchops", "--out", str(tmp_path), "--seeds", "1"]
    rc = main([*args, "--tasks", "2", "--conditions", "repeat", "--n-boot", "50", "--json"])
    assert rc == 0
    out = json.loads(capsys.readouterr().out)
    assert out["records"] == 2 * 5 * 2  # original is always run beside the chosen ones
    rows = [json.loads(x) for x in (tmp_path / "records.jsonl").read_text().splitlines()]
    assert {r["source"]["condition"] for r in rows} == {"original", "repeat"}


def test_probe_run_unknown_condition_exits_2_naming_the_allowed(tmp_path: Path, capsys) -> None:
    rc = main(["probe", "run", "--out", str(tmp_path), "--conditions", "renamed"])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(err) == 1 and "tool_rename" in err[0] and "renamed" in err[0]


def test_probe_compare_text_says_no_task_differs_instead_of_nan(shared_data: Path, capsys) -> None:
    sim = str(shared_data / "tau2/simulations/retail__gpt-4.1__user-gpt-4.1__test40x1.json")
    assert main(["probe", "compare", sim, sim]) == 0
    out = capsys.readouterr().out
    assert "sign test: no task differs" in out and "nan" not in out


@pytest.mark.parametrize("spec", ["nosuch:x", "openai:m@http://[::1", "py:..evil:f"])
def test_probe_run_bad_model_spec_writes_nothing(tmp_path: Path, capsys, spec) -> None:
    # The spec is checked before the study folder is touched, so the corrected rerun
    # into the same folder is not refused.
    out = tmp_path / "study"
    args = ["probe", "run", "--policies", "llm", "--tasks", "1", "--seeds", "1"]
    assert main([*args, "--model", spec, "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "unexpected" not in err
    assert not out.exists()


@pytest.mark.parametrize(
    ("option", "value"),
    [("--judge-temperature", "3"), ("--judge-repeats", "0"), ("--judge-records", "0")],
)
def test_probe_analyze_refuses_a_judge_option_out_of_range_without_a_judge_model(
    tmp_path: Path, capsys, option: str, value: str
) -> None:
    """The judge options are checked by JudgeConfig's rules even when no --judge-model
    makes them used: a value out of range is one line naming the option, exit 2."""
    assert main(["probe", "analyze", str(tmp_path), option, value]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f"invalid {option.removeprefix('--')}={value}" in err[0]


def test_one_task_gives_not_estimable_never_an_interval(
    tmp_path: Path, capsys, shared_data
) -> None:
    # issue 26: fewer than 2 task clusters is "not estimable", not a NaN or zero-width interval
    src = shared_data / "tau2/simulations/airline__gemini-2.5-flash__user-same__10tasks-x2.json"
    doc = json.loads(src.read_text(encoding="utf-8"))
    task = doc["simulations"][0]["task_id"]
    doc["simulations"] = [s for s in doc["simulations"] if s["task_id"] == task]
    doc["tasks"] = [t for t in doc["tasks"] if t["id"] == task]
    one = tmp_path / "one_task.json"
    one.write_text(json.dumps(doc), encoding="utf-8")
    assert main(["probe", "reruns", str(one)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("not estimable:") and "nan" not in out and "[" not in out
    assert main(["probe", "reruns", str(one), "--json"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert got["flip_rate"] is None and got["ci95"] is None and got["n_tasks"] == 1
    assert main(["probe", "compare", str(one), str(one)]) == 0
    out = capsys.readouterr().out
    assert "not estimable" in out and "nan" not in out

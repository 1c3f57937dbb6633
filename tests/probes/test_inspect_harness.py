"""TRACE on a real harness: inspect_evals' tau2 tasks run on Inspect AI under every
mutation by the scripted reference agents (mockllm, no model), rescored by the task's own
scorer. These are the known-answer tests of the whole pipeline on real tau2 tasks."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from toolaudit.cli.main import main
from toolaudit.errors import ConfigError
from toolaudit.probes import HarnessStudyConfig
from toolaudit.probes._mutations import tool_mutation
from toolaudit.probes.harnesses.inspect._harness import InspectHarness, InspectRunSpec
from toolaudit.probes.harnesses.inspect._samples import map_back_sample
from toolaudit.probes.harnesses.inspect._tau2 import Tau2Domain, tool_names

RETAIL = "inspect_evals/tau2_retail"
TELECOM = "inspect_evals/tau2_telecom"
# A telecom task whose reward basis includes ACTION with one agent action
# (transfer_to_human_agents): inspect_evals checks it by the tool's name.
TELECOM_ACTION = "[service_issue]airplane_mode_on|lock_sim_card_pin[PERSONA:Easy]"
CONDITIONS = "original,tool_rename,reformat,misleading_names,repeat"
REPO = Path(__file__).resolve().parents[2]


def _cell(doc: dict, policy: str, condition: str) -> dict:
    return next(c for c in doc["cells"] if c["policy"] == policy and c["condition"] == condition)


@pytest.fixture(scope="module")
def retail_study(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("tau2_retail")
    code = main([
        "probe", "run", "--harness", "inspect", "--task", RETAIL,
        "--policies", "careful,overfit,inert", "--conditions", CONDITIONS,
        "--limit", "1", "--n-boot", "200", "--out", str(out), "--report",
    ])  # fmt: skip
    assert code == 0
    return out


def test_retail_scripted_agents_give_the_known_answers(retail_study: Path) -> None:
    doc = json.loads((retail_study / "probe.json").read_text())
    assert doc["harness"] == "inspect" and doc["records"] == 15
    # careful chooses tools by description: every condition passes, nothing changes
    for cond in ("tool_rename", "reformat", "misleading_names", "repeat"):
        c = _cell(doc, "careful", cond)
        assert (c["vrg"], c["vrg_rescored"], c["behavior_changed_rate"]) == (0.0, 0.0, 0.0)
    # overfit calls memorised names: renamed tools are not found, misleading names run
    # other operations; the retail scorer compares database states, so rescoring the same
    # trajectories leaves the gap (behaviour, not the scoring rule)
    for cond in ("tool_rename", "misleading_names"):
        c = _cell(doc, "overfit", cond)
        assert (c["vrg"], c["vrg_rescored"], c["behavior_changed_rate"]) == (1.0, 1.0, 1.0)
        assert c["first_difference"]["index"] == 0
    assert _cell(doc, "overfit", "reformat")["vrg"] == 0.0
    assert _cell(doc, "overfit", "tool_rename")["first_difference"]["mutated"].startswith(
        "not_a_tool:find_user_id_by_name_zip"
    )
    # the no-op baseline and the positive control against headroom
    assert doc["noop_baseline"]["run"] and doc["noop_baseline"]["n_tasks"] == 1
    controls = {r["policy"]: r["verdict"] for r in doc["positive_controls"]}
    # one task: no interval, so the control cannot be judged (never "not detected")
    assert controls == {"careful": "not_estimable", "overfit": "not_estimable"}
    assert _cell(doc, "careful", "tool_rename")["equivalence_informative"] is False
    assert (retail_study / "report.html").is_file()


def test_retail_logs_are_real_inspect_logs_that_traces_reads(retail_study: Path) -> None:
    logs = sorted((retail_study / "logs").rglob("*.eval"))
    assert len(logs) == 15
    careful = retail_study / "logs" / "careful" / "tool_rename" / "0_e0.eval"
    out = subprocess.run(
        [str(Path(sys.executable).parent / "toolaudit"), "traces", "inspect", str(careful), "--json"],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    counts = json.loads(out.stdout)
    assert counts["tool_calls"] == 5 and counts["mean_reward"] == 1.0  # from the sample store
    dump = subprocess.run(
        [str(Path(sys.executable).parent / "inspect"), "log", "dump", str(careful)],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert json.loads(dump.stdout)["eval"]["task"] == "tau2_retail"


def test_inspect_score_rescores_a_study_log_without_scorer(
    retail_study: Path, tmp_path: Path
) -> None:
    """The rebuilt task recorded its scorer unqualified ('retail_scorer'), which plain
    `inspect score LOG` could not find; the log now names it as Inspect's registry does."""
    log = retail_study / "logs" / "careful" / "original" / "0_e0.eval"
    dump = subprocess.run(
        [str(Path(sys.executable).parent / "inspect"), "log", "dump", "--header-only", str(log)],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert [s["name"] for s in json.loads(dump.stdout)["eval"]["scorers"]] == [
        "inspect_evals/retail_scorer"
    ]
    out = tmp_path / "rescored.eval"
    score = subprocess.run(
        [str(Path(sys.executable).parent / "inspect"), "score", str(log), "--action",
         "append", "--output-file", str(out)],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert score.returncode == 0, score.stdout + score.stderr
    assert out.is_file() and "--scorer" not in score.stdout + score.stderr


def test_resume_runs_nothing_and_a_changed_option_is_refused(retail_study: Path) -> None:
    before = (retail_study / "records.jsonl").read_bytes()
    assert main(["probe", "run", "--harness", "inspect", "--task", RETAIL,
                 "--policies", "careful,overfit,inert", "--conditions", CONDITIONS,
                 "--limit", "1", "--n-boot", "200", "--out", str(retail_study),
                 "--no-analyze"]) == 0  # fmt: skip
    assert (retail_study / "records.jsonl").read_bytes() == before
    assert main(["probe", "run", "--harness", "inspect", "--task", RETAIL,
                 "--policies", "careful,overfit,inert", "--conditions", CONDITIONS,
                 "--limit", "2", "--out", str(retail_study)]) == 2  # fmt: skip


def test_telecom_name_reading_scorer_is_exposed_by_rescoring(tmp_path: Path) -> None:
    """telecom's scorer checks the agent's actions by tool name: careful performs the
    right operation under an alias and fails; the same trajectory mapped back passes.
    overfit calls the memorised canonical name, which was no tool after renaming (Inspect
    answers "not found"): the live scorer still credits the call by its name (no gap),
    while the trajectory mapped back to the operations actually executed fails (rescored
    gap 1): the scorer reads names, not executions."""
    code = main([
        "probe", "run", "--harness", "inspect", "--task", TELECOM,
        "--policies", "careful,overfit", "--conditions", "original,tool_rename",
        "--task-ids", TELECOM_ACTION, "--n-boot", "50", "--out", str(tmp_path), "--json",
    ])  # fmt: skip
    assert code == 0
    doc = json.loads((tmp_path / "probe.json").read_text())
    c = _cell(doc, "careful", "tool_rename")
    assert (c["vrg"], c["vrg_rescored"], c["behavior_changed_rate"]) == (1.0, 0.0, 0.0)
    o = _cell(doc, "overfit", "tool_rename")
    assert (o["vrg"], o["vrg_rescored"], o["behavior_changed_rate"]) == (0.0, 1.0, 1.0)
    rec = [json.loads(x) for x in (tmp_path / "records.jsonl").read_text().splitlines()]
    renamed = next(
        r for r in rec if r["condition"] == "tool_rename" and r["source"]["policy"] == "careful"
    )
    assert [c["name"] for m in renamed["messages"] for c in m.get("tool_calls") or []] == [
        "handoff_to_human_agents"
    ]
    assert renamed["reward"] == 0.0 and renamed["source"]["rescored_reward"] == 1.0


def test_map_back_restores_canonical_names_in_the_store(tmp_path: Path) -> None:
    from inspect_ai.log import read_eval_log

    h = InspectHarness(TELECOM, log_dir=tmp_path)
    ep = h.run(InspectRunSpec(TELECOM, TELECOM_ACTION, "careful", "tool_rename", 0))
    log = read_eval_log(
        str(tmp_path / "careful" / "tool_rename" / f"{_safe(TELECOM_ACTION)}_e0.eval")
    )
    m = tool_mutation("tool_rename", tool_names(Tau2Domain("telecom").agent_tools()))
    back = map_back_sample(log.samples[0], m, {})
    text = json.dumps(back.store)
    assert "handoff_to_human_agents" not in text and "transfer_to_human_agents" in text
    assert ep.source["log"] == f"careful/tool_rename/{_safe(TELECOM_ACTION)}_e0.eval"


def _safe(sample_id: str) -> str:
    return "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in sample_id)


def test_config_refuses_unknown_task_policy_and_a_lone_user_model() -> None:
    with pytest.raises(ConfigError, match="tau2_retail"):
        HarnessStudyConfig(task="inspect_evals/no_such_task")
    with pytest.raises(ConfigError, match="careful"):
        HarnessStudyConfig(task=RETAIL, policies=("shortcut",))
    with pytest.raises(ConfigError, match="--model"):
        HarnessStudyConfig(task=RETAIL, user_model="embedded:qwen")
    assert HarnessStudyConfig(task=RETAIL, model="llama:qwen").run_policies() == ("llm", "inert")


def test_cli_needs_a_task_and_names_an_unknown_sample(tmp_path: Path, capsys) -> None:
    assert main(["probe", "run", "--harness", "inspect", "--out", str(tmp_path)]) == 2
    assert "--task" in capsys.readouterr().err
    assert main(["probe", "run", "--harness", "inspect", "--task", RETAIL, "--task-ids",
                 "no-such-task", "--out", str(tmp_path / "x")]) == 2  # fmt: skip
    err = capsys.readouterr().err
    assert "no-such-task" in err and "Traceback" not in err
    assert not (tmp_path / "x" / "run_config.json").exists()


@pytest.mark.slow
@pytest.mark.model
def test_embedded_qwen_acts_on_tau2_through_the_toolaudit_provider(tmp_path: Path) -> None:
    """The embedded Qwen as agent and user simulator, its tool calls parsed by toolaudit's
    model layer: the calls appear in the log and in `traces inspect`'s counts."""
    code = main([
        "probe", "run", "--harness", "inspect", "--task", RETAIL, "--model", "embedded:qwen",
        "--user-model", "embedded:qwen", "--policies", "llm", "--conditions", "original",
        "--limit", "1", "--epochs", "1", "--max-turns", "2", "--temperature", "0.7",
        "--n-boot", "50", "--out", str(tmp_path), "--json",
    ])  # fmt: skip
    assert code == 0
    rec = json.loads((tmp_path / "records.jsonl").read_text().splitlines()[0])
    info = rec["source"]["agent_info"]
    assert info["model"] == "embedded:qwen" and info["tool_calls"] > 0
    log = tmp_path / "logs" / "llm" / "original" / "0_e0.eval"
    out = subprocess.run(
        [str(Path(sys.executable).parent / "toolaudit"), "traces", "inspect", str(log), "--json"],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert json.loads(out.stdout)["tool_calls"] == info["tool_calls"]


def test_max_samples_runs_a_batch_in_one_log_with_the_same_records(tmp_path: Path) -> None:
    """Issue 56 item 6: with --max-samples the scripted runs of one (policy, condition,
    epoch) share one Inspect eval and one log, and each record is what its own eval gave
    the committed study (results/probe-tau2-scripted/retail, one eval per run): every
    field but source.log. Rerunning records nothing new."""
    committed = {}
    for line in (REPO / "results/probe-tau2-scripted/retail/records.jsonl").open():
        rec = json.loads(line)
        committed[rec["source"]["config_hash"]] = rec
    argv = [
        "probe", "run", "--harness", "inspect", "--task", RETAIL, "--policies", "careful",
        "--conditions", "original,reformat", "--limit", "2", "--max-samples", "2",
        "--no-analyze", "--out", str(tmp_path),
    ]  # fmt: skip
    assert main(argv) == 0
    records = [json.loads(x) for x in (tmp_path / "records.jsonl").read_text().splitlines()]
    assert len(records) == 4
    logs = sorted(
        p.relative_to(tmp_path / "logs").as_posix() for p in (tmp_path / "logs").rglob("*.eval")
    )
    assert logs == ["careful/original/e0.eval", "careful/reformat/e0.eval"]
    for rec in records:
        old = committed[rec["source"]["config_hash"]]
        assert rec["source"].pop("log") == f"careful/{rec['condition']}/e0.eval"
        old["source"].pop("log")
        assert rec == old
    before = (tmp_path / "records.jsonl").read_bytes()
    assert main(argv) == 0 and (tmp_path / "records.jsonl").read_bytes() == before

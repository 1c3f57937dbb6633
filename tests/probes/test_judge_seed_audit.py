"""The seed's judge audit (``probe judge-audit``): payloads, views, record choice, resume,
refusal, statistics against hand-computed values, the procedural-objection heuristic."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.probes import _seed_judges
from toolaudit.cli.main import main
from toolaudit.errors import ConfigError
from toolaudit.probes import (
    VerdictRecord,
    classify_reason,
    seed_judge_audit,
    select_records,
)
from toolaudit.probes.judges._prompts import judge_messages
from toolaudit.probes.judges._replies import parse_reply
from toolaudit.probes.judges._run import JudgeAuditConfig, judge_contexts, judge_setting, run_judges
from toolaudit.traces import Episode, load_episodes

STEADY = "py:tests.probes._seed_judges:steady"
SENSITIVE = "py:tests.probes._seed_judges:format_sensitive"
VIEWS = ("original", "repeat", "tool_rename", "reformat")


def _retail(shared_data: Path) -> Path:
    return shared_data / "tau2" / "simulations" / "retail__gpt-4.1__user-gpt-4.1__test40x1.json"


def _text(messages: list[dict]) -> str:
    return "\n".join(m["content"] for m in messages)


@pytest.mark.parametrize("name", ["retail__gpt-4.1__user-gpt-4.1__test40x1.json",
                                  "airline__qwen2.5-7b__user-gpt-4.1__50x1.json"])  # fmt: skip
def test_judge_messages_withhold_identity_and_reward(shared_data: Path, name: str) -> None:
    path = shared_data / "tau2" / "simulations" / name
    doc = json.loads(path.read_text(encoding="utf-8"))
    models = {doc["info"]["agent_info"]["llm"], doc["info"]["user_info"]["llm"]}
    chosen = select_records(list(load_episodes(path)), 6, seed=1)
    contexts, _ = judge_contexts(chosen, data_root=shared_data)
    for ep in chosen:
        ctx = contexts[ep.source["episode_id"]]
        # The same trajectory with another reward and another agent identity.
        other = ep.model_copy(update={
            "reward": 1.0 - (ep.reward or 0.0),
            "source": {**ep.source, "agent_model": "x", "user_model": "y", "episode_id": "z"},
        })  # fmt: skip
        for view in VIEWS:
            payload = judge_messages(ep, ctx, view)
            text = _text(payload).lower()
            assert "reward" not in text
            assert not any(m.lower() in text for m in models)
            assert ep.source["episode_id"] not in text
            assert judge_messages(other, ctx, view) == payload


def test_seed_judge_views_rename_consistently_and_repeat_is_identical(shared_data: Path) -> None:
    chosen = select_records(list(load_episodes(_retail(shared_data))), 3, seed=0)
    contexts, fallbacks = judge_contexts(chosen, data_root=shared_data)
    assert fallbacks == []  # retail's policy and tasks are in the shared data
    for ep in chosen:
        ctx = contexts[ep.source["episode_id"]]
        original = judge_messages(ep, ctx, "original")
        assert judge_messages(ep, ctx, "repeat") == original
        renamed = _text(judge_messages(ep, ctx, "tool_rename"))
        for name in ctx.tools:  # no canonical name survives anywhere, in policy or calls
            assert (
                re.search(rf"(?<![A-Za-z0-9_]){re.escape(name)}(?![A-Za-z0-9_])", renamed) is None
            )
        assert "Domain policy" in renamed and "fetch_order_details" in renamed
        assert len(renamed.splitlines()) == len(_text(original).splitlines())


def test_parse_reply_reads_verdict_and_first_sentence() -> None:
    assert parse_reply("**FAIL**: Wrong item. Extra.") == ("fail", "Wrong item.")
    assert parse_reply("Insufficient\nThe log stops early.") == (
        "insufficient",
        "The log stops early.",
    )
    assert parse_reply("maybe")[0] == "unparseable"
    assert parse_reply("Verdict: PASS - nothing here is a fail.") == (
        "pass",
        "nothing here is a fail.",
    )
    assert parse_reply("\n```\nFAIL\n```") == ("fail", "")


# Two replies Gemma 3 270M (base) gave in the committed study: it echoes the prompt's
# instruction; the old parser read the first option listed ("PASS") as its verdict.
_ECHOES = (
    "You are grading one recorded conversation between a customer-service AI agent and a "
    "user. Reply with exactly one word on the first line:PASS, FAIL or INSUFFICIENT "
    "(INSUFFICIENT when the record does",
    "You are grading one recorded conversation. Reply with exactly one word on the first "
    "line: pass.\nOn the second line give a one-sentence reason: FAIL.",
)


@pytest.mark.parametrize("reply", _ECHOES)
def test_parse_reply_does_not_read_an_echoed_instruction_as_a_verdict(reply: str) -> None:
    assert parse_reply(reply)[0] == "unparseable"
    assert parse_reply("PASS/FAIL/INSUFFICIENT")[0] == "unparseable"
    assert parse_reply("The agent passed.\nPASS")[0] == "unparseable"  # not on line 1


def test_judge_setting_reads_a_per_judge_temperature() -> None:
    assert judge_setting("llama:qwen,threads=2,temperature=0", 0.7) == ("llama:qwen,threads=2", 0.0)
    assert judge_setting("openai:m@http://h:1/v1", 0.3) == ("openai:m@http://h:1/v1", 0.3)
    with pytest.raises(ConfigError, match="temperature"):
        judge_setting("llama:qwen,temperature=hot", 0.7)
    with pytest.raises(ConfigError, match="temperature"):
        JudgeAuditConfig(judges=("llama:qwen,temperature=3",))


class _Recorder:
    """A loaded judge that records (payload, temperature) per call and always passes."""

    def __init__(self, spec: str, calls: list[tuple[str, str, float]]) -> None:
        self.spec, self.calls = spec, calls

    def generate(self, messages: list[dict[str, object]], **kw: object) -> object:
        self.calls.append((self.spec, _text(messages), float(kw["temperature"])))  # type: ignore[arg-type]
        return type("G", (), {"text": "PASS\nFine.", "raw": ""})()


def test_two_settings_of_one_model_share_it_and_read_each_payload_together(
    shared_data: Path, tmp_path: Path
) -> None:
    episodes = select_records(list(load_episodes(_retail(shared_data))), 2, seed=0)
    contexts, _ = judge_contexts(episodes, data_root=shared_data)
    calls: list[tuple[str, str, float]] = []
    loaded: list[str] = []

    def load(spec: str) -> _Recorder:
        loaded.append(spec)
        return _Recorder(spec, calls)

    cfg = JudgeAuditConfig(judges=("m,threads=2", "m,threads=2,temperature=0"), n_repeats=2)
    out = run_judges(episodes, contexts, cfg, out_path=tmp_path / "v.jsonl", load=load)
    assert loaded == ["m,threads=2"]  # one model for both settings
    assert len(out) == len(calls) == 2 * 4 * 2 * 2
    assert sorted({t for _, _, t in calls}) == [0.0, 0.7]
    # the payload changes only between views: original and repeat (identical bytes)
    # of both judges come together, then tool_rename, then reformat: 3 per record
    changes = sum(a[1] != b[1] for a, b in zip(calls, calls[1:], strict=False)) + 1
    assert changes == 2 * 3
    assert [v.judge for v in out[:4]] == ["m,threads=2"] * 2 + ["m,threads=2,temperature=0"] * 2


def test_select_records_is_seeded_stratified_and_spans_tasks(shared_data: Path) -> None:
    episodes = list(load_episodes(_retail(shared_data)))  # 34 native passes, 6 fails
    a = select_records(episodes, 8, seed=3)
    assert [e.source["episode_id"] for e in a] == [
        e.source["episode_id"] for e in select_records(episodes, 8, seed=3)
    ]
    assert sum(e.reward == 0.0 for e in a) == 4 and sum(e.reward == 1.0 for e in a) == 4
    assert len({e.task_id for e in a}) == 8
    assert len(select_records(episodes, 100, seed=0)) == 40


def test_classify_reason_separates_procedure_from_outcome() -> None:
    assert classify_reason("The agent did not verify the user's identity.") == "procedure"
    assert classify_reason("It should have asked for explicit confirmation.") == "procedure"
    assert classify_reason("The agent exchanged the wrong lamp.") == "outcome"
    assert classify_reason("The order was not cancelled.") == "outcome"
    assert classify_reason("It never confirmed and cancelled the wrong order.") == "mixed"
    assert classify_reason("Bad.") == "unclear" and classify_reason(None) == "unclear"


def _v(
    judge: str, view: str, rep: int, rec: str, verdict: str, native: float, reason: str
) -> VerdictRecord:
    return VerdictRecord(judge=judge, view=view, repeat=rep, record_id=rec, task_id=f"t{rec}",
                         verdict=verdict, native_reward=native, reason=reason)  # type: ignore[arg-type]  # fmt: skip


def test_seed_judge_audit_known_verdicts() -> None:
    proc, out = "Did not verify identity.", "Refunded the wrong order."
    vs = []
    for rec, native in (("1", 1.0), ("2", 1.0), ("3", 0.0), ("4", 0.0)):
        for view in ("original", "reformat"):
            for rep in (0, 1):
                vs.append(_v("A", view, rep, rec, "pass" if native else "fail", native, "ok"))
    # B: fails record 1 procedurally, record 2 on outcome (calls 0 and 1), passes 3, 4.
    for view in ("original", "reformat"):
        for rep in (0, 1):
            vs.append(_v("B", view, rep, "1", "fail", 1.0, proc))
            vs.append(_v("B", view, rep, "2", "fail" if rep == 0 else "pass", 1.0, out))
            vs.append(_v("B", view, rep, "3", "pass", 0.0, "fine"))
            vs.append(_v("B", view, rep, "4", "unparseable", 0.0, "??"))
    r = seed_judge_audit(vs)
    a, b = r["judges"]
    assert a["native_agreement"] == 1.0 and a["native_kappa"] == pytest.approx(1.0)
    assert b["repeat_flips"]["rate"] == pytest.approx(2 / 6)  # record 2 flips in both views
    assert b["view_flips"]["rate"] == 0.0
    assert b["verdict_shares"] == {"pass": 6 / 16, "fail": 6 / 16, "insufficient": 0.0,
                                   "unparseable": 4 / 16}  # fmt: skip
    p = b["procedural_objections"]
    assert (p["n_fail_on_native_pass"], p["procedure"], p["outcome"]) == (6, 4, 2)
    assert p["share"] == pytest.approx(4 / 6)
    (between,) = r["between"]
    # (record, view) majorities; B has none for record 4 (all unparseable), so 6 pairs;
    # B fails 1, fails 2 (a 1-1 tie resolves to fail) and passes 3: all differ from A.
    assert between["n_pairs"] == 6
    assert between["disagreement"] == pytest.approx(6 / 6)
    assert {d["record_id"] for d in between["disagreements"]} == {"1", "2", "3"}
    assert between["disagreements"][0]["reasons"] == ["ok", proc]


def test_judge_audit_cli_with_py_judges_hand_computed(shared_data: Path, tmp_path: Path) -> None:
    _seed_judges.SEEN.clear()
    out = tmp_path / "ja"
    args = ["-q", "probe", "judge-audit", str(_retail(shared_data)), "--judge-model", STEADY,
            "--judge-model", SENSITIVE, "--records", "6", "--repeats", "2", "--seed", "0",
            "--data-root", str(shared_data), "--out", str(out)]  # fmt: skip
    assert main(args) == 0
    assert len(_seed_judges.SEEN) == 2 * 6 * 4 * 2
    seen = [_text(m) for m in _seed_judges.SEEN]
    assert not any("gpt-4.1" in t or "reward" in t.lower() for t in seen)
    # Every chosen record shows JSON tool output, so the sensitive judge fails exactly
    # the reformat view.
    assert sum(_seed_judges.reformatted(t) for t in seen) == 2 * 6 * 2
    r = json.loads((out / "judge_audit.json").read_text())
    steady, sensitive = sorted(r["judges"], key=lambda j: j["judge"] != STEADY)
    assert r["views"] == list(VIEWS) and r["n_records"] == 6
    assert [x["native_pass"] for x in r["records"]].count(1.0) == 3
    assert steady["view_flips"]["rate"] == 0.0 and steady["native_agreement"] == 0.5
    assert steady["native_kappa"] == 0.0
    assert sensitive["repeat_flips"]["rate"] == 0.0
    assert sensitive["view_flips"]["rate"] == pytest.approx(1 / 3)
    flips = sensitive["view_flips_by_view"]
    assert (flips["repeat"]["rate"], flips["tool_rename"]["rate"], flips["reformat"]["rate"]) == (
        0.0,
        0.0,
        1.0,
    )
    p = sensitive["procedural_objections"]
    assert (p["procedure"], p["n_fail_on_native_pass"]) == (3 * 2, 3 * 2)
    (between,) = r["between"]
    assert between["n_pairs"] == 24 and between["disagreement"] == pytest.approx(0.25)
    assert between["kappa"] == 0.0 and len(between["disagreements"]) == 6
    assert r["meta"]["config"]["judge_model"] == [STEADY, SENSITIVE] and r["meta"]["seed"] == 0
    report = (out / "report.md").read_text()
    assert "The agent did not ask for explicit confirmation" in report and "57%" in report
    assert len((out / "verdicts.jsonl").read_text().splitlines()) == 96


def test_judge_audit_cli_resumes_and_refuses_changed_options(
    shared_data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "ja"
    args = ["-q", "probe", "judge-audit", str(_retail(shared_data)), "--judge-model", STEADY,
            "--records", "2", "--repeats", "2", "--views", "original,reformat",
            "--out", str(out)]  # fmt: skip
    assert main(args) == 0
    path = out / "verdicts.jsonl"
    lines = path.read_text().splitlines(keepends=True)
    assert len(lines) == 8
    path.write_text("".join(lines[:5]) + lines[5][:30])  # an interrupted append
    _seed_judges.SEEN.clear()
    assert main(args) == 0
    assert len(_seed_judges.SEEN) == 3  # only the missing calls are made
    assert path.read_text().startswith("".join(lines[:5]))  # kept byte for byte
    assert len(path.read_text().splitlines()) == 8
    capsys.readouterr()
    assert main([*args[:-2], "--repeats", "3", "--out", str(out)]) == 2
    assert "--repeats=2" in capsys.readouterr().err


def test_judge_audit_cli_refuses_unknown_view(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["probe", "judge-audit", "x.json", "--judge-model", STEADY, "--views",
            "original,shuffled", "--out", str(tmp_path / "o")]  # fmt: skip
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "allowed original, repeat, tool_rename, reformat" in err and "'shuffled'" in err


@pytest.mark.slow
def test_judge_audit_llama_qwen_judges_on_real_records(shared_data: Path, tmp_path: Path) -> None:
    """Two real judges, the llama.cpp Qwen sampled (temperature 0.7) and greedy, as the
    committed study runs them (Gemma 3 270M, a base model, gives no verdict: see
    results/judge-audit/gemma-dropped): 2 records x 2 views x 1 repeat; ``between`` is
    filled and the views are presentation changes (about 10 minutes on 2 loaded cores:
    the prompts hold the retail policy and a whole conversation; the two settings share
    one model and read each payload once)."""
    out = tmp_path / "ja"
    greedy = "llama:qwen,temperature=0"
    args = ["-q", "probe", "judge-audit", str(_retail(shared_data)), "--judge-model",
            "llama:qwen", "--judge-model", greedy, "--records", "2", "--repeats", "1",
            "--views", "original,tool_rename", "--out", str(out)]  # fmt: skip
    assert main(args) == 0
    r = json.loads((out / "judge_audit.json").read_text())
    assert r["views"] == ["original", "tool_rename"] and r["n_verdicts"] == 2 * 2 * 2
    assert r["between"] and r["between"][0]["n_pairs"] >= 1
    assert r["between"][0]["judges"] == sorted(["llama:qwen", greedy])
    for name in ("llama:qwen", greedy):
        judge = next(j for j in r["judges"] if j["judge"] == name)
        assert judge["n_calls"] == 4 and judge["unparseable"] < 4
    assert "settings of one model (llama:qwen)" in (out / "report.md").read_text()


def test_select_records_keeps_both_outcomes_for_any_seed() -> None:
    eps = [Episode(task_id=str(i % 5), trial=i, reward=float(i % 7 == 0)) for i in range(35)]
    for seed in range(5):
        got = select_records(eps, 4, seed=seed)
        assert {e.reward for e in got} == {0.0, 1.0}


def test_judge_audit_shares_records_over_several_agents_files(
    shared_data: Path, tmp_path: Path
) -> None:
    sims = shared_data / "tau2" / "simulations"
    files = [sims / "retail__gpt-4.1__user-gpt-4.1__test40x1.json",
             sims / "retail__ft-gpt-4.1-sft__user-gpt-4.1__test40x1.json",
             sims / "airline__qwen2.5-7b__user-gpt-4.1__50x1.json"]  # fmt: skip
    _seed_judges.SEEN.clear()
    out = tmp_path / "ja"
    args = ["-q", "probe", "judge-audit", *map(str, files), "--judge-model", STEADY,
            "--records", "7", "--repeats", "1", "--views", "original,tool_rename",
            "--data-root", str(shared_data), "--out", str(out)]  # fmt: skip
    assert main(args) == 0
    r = json.loads((out / "judge_audit.json").read_text())
    ids = [x["record_id"] for x in r["records"]]
    per_file = [
        sum(i in {str(e.source["episode_id"]) for e in load_episodes(f)} for i in ids)
        for f in files
    ]
    assert per_file == [3, 2, 2]  # 7 shared out evenly, the first file takes the remainder
    for f in files:  # both native outcomes in every agent's share
        share = {x["native_pass"] for x in r["records"] if x["record_id"] in
                 {str(e.source["episode_id"]) for e in load_episodes(f)}}  # fmt: skip
        assert share == {0.0, 1.0}
    recorded = json.loads((out / "run_config.json").read_text())["traces"]
    assert [str((out / p).resolve()) for p in recorded] == [str(f.resolve()) for f in files]
    # every payload starts with the domain's policy, so consecutive calls of one domain
    # share that prefix (a prefix cache's gain)
    seen = [_text(m) for m in _seed_judges.SEEN]
    assert len(seen) == 7 * 2
    first, second = seen[0], seen[2]  # two retail records' original views
    cut = first.index("## Task criteria")
    assert second.startswith(first[:cut]) and first[:cut].count("## Domain policy") == 1
    assert main(args) == 0  # a rerun resumes: nothing left to ask
    assert len(_seed_judges.SEEN) == 7 * 2


def test_judge_calls_go_record_by_record_in_prefix_cache_order() -> None:
    from toolaudit.probes import JudgeAuditConfig
    from toolaudit.probes.judges._run import _call_order

    eps = [Episode(task_id=str(i), trial=0, reward=1.0, source={"episode_id": f"e{i}"})
           for i in range(2)]  # fmt: skip
    cfg = JudgeAuditConfig(judges=("a", "b"), n_repeats=2, n_records=2)
    order = [(j, e.source["episode_id"], v, r) for j, e, v, r in _call_order(cfg, eps)]
    assert len(order) == len(set(order)) == 2 * 2 * 4 * 2
    # view by view (repeat right after original), judge by judge within a view
    assert order[:8] == [
        ("a", "e0", "original", 0), ("a", "e0", "original", 1),
        ("b", "e0", "original", 0), ("b", "e0", "original", 1),
        ("a", "e0", "repeat", 0), ("a", "e0", "repeat", 1),
        ("b", "e0", "repeat", 0), ("b", "e0", "repeat", 1),
    ]  # fmt: skip
    assert [v for _, _, v, _ in order[8:16]] == ["tool_rename"] * 4 + ["reformat"] * 4
    assert {e for _, e, *_ in order[:16]} == {"e0"} and {e for _, e, *_ in order[16:]} == {"e1"}


def test_airline_policy_comes_from_inspect_evals_data_and_is_recorded(shared_data: Path) -> None:
    pytest.importorskip("inspect_evals")
    path = shared_data / "tau2" / "simulations" / "airline__gpt-4.1__user-gpt-4.1__test20x1.json"
    assert not (shared_data / "tau2" / "domains" / "airline").exists()  # the premise
    chosen = select_records(list(load_episodes(path)), 3, seed=0)
    contexts, fallbacks = judge_contexts(chosen, data_root=shared_data)
    assert all("# Airline Agent Policy" in c.policy for c in contexts.values())
    (fb,) = fallbacks
    assert fb.kind == "stand_in_data" and fb.count == 3
    assert "inspect_evals/tau2/data/domains/airline/policy.txt" in fb.detail


def test_judge_audit_partial_analyses_whole_records_without_asking(
    shared_data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "ja"
    args = ["-q", "probe", "judge-audit", str(_retail(shared_data)), "--judge-model", STEADY,
            "--judge-model", SENSITIVE, "--records", "4", "--repeats", "2",
            "--data-root", str(shared_data), "--out", str(out)]  # fmt: skip
    assert main([*args, "--partial"]) == 2  # nothing has started there
    assert "no judge audit has started there" in capsys.readouterr().err
    assert main(args) == 0
    path = out / "verdicts.jsonl"
    lines = path.read_text().splitlines(keepends=True)
    assert len(lines) == 4 * 2 * 4 * 2
    # calls go record by record: keep the first two records whole and half of the third
    path.write_text("".join(lines[: 2 * 16 + 8]))
    _seed_judges.SEEN.clear()
    capsys.readouterr()
    assert main([a for a in [*args, "--partial"] if a != "-q"]) == 0
    assert _seed_judges.SEEN == []  # no judge was asked
    printed = capsys.readouterr().out
    assert "partial: records with every verdict, 2 of 4 (40 of 64 verdicts so far)" in printed
    assert f"wrote {out / 'partial' / 'judge_audit.json'}" in printed
    r = json.loads((out / "partial" / "judge_audit.json").read_text())
    assert r["partial"] == {"records_complete": 2, "records_chosen": 4, "verdicts": 40,
                            "verdicts_planned": 64}  # fmt: skip
    assert r["n_records"] == 2 and len(r["records"]) == 2
    assert "partial, 2 of 4 records" in (out / "partial" / "report.md").read_text()
    assert len(path.read_text().splitlines()) == 40  # the study's own files untouched


def test_report_says_when_two_judges_are_settings_of_one_model() -> None:
    from toolaudit.probes.judges._seed_report import _sentences

    vs = [_v(j, "original", rep, rec, verdict, 1.0, "ok")
          for j, verdict in (("m,threads=2", "pass"), ("m,threads=2,temperature=0", "fail"))
          for rec in ("1", "2") for rep in (0, 1)]  # fmt: skip
    text = " ".join(_sentences(seed_judge_audit(vs)))
    assert "settings of one model (m,threads=2)" in text
    vs2 = [v.model_copy(update={"judge": "other"}) if v.judge != "m,threads=2" else v for v in vs]
    assert "settings of one model" not in " ".join(_sentences(seed_judge_audit(vs2)))


class _SeedRecorder:
    """A loaded judge that records each call's (payload, seed) and gives a labelled reply."""

    def __init__(self, calls: list[tuple[str, int]]) -> None:
        self.calls = calls

    def generate(self, messages: list[dict[str, object]], **kw: object) -> object:
        self.calls.append((_text(messages), int(kw["seed"])))  # type: ignore[call-overload]
        return type("G", (), {"text": "Reason: The order was cancelled.\nVerdict: PASS",
                              "raw": ""})()  # fmt: skip


def test_each_call_seed_depends_on_record_view_judge_and_call(
    shared_data: Path, tmp_path: Path
) -> None:
    """The defect of issue 54: the first call of every record in a view shared one seed.
    Now two records' first calls differ, and a rerun makes the same calls with the same
    seeds."""
    episodes = select_records(list(load_episodes(_retail(shared_data))), 3, seed=0)
    contexts, _ = judge_contexts(episodes, data_root=shared_data)
    cfg = JudgeAuditConfig(judges=("a", "b"), n_repeats=2, views=("original", "reformat"))
    runs: list[list[tuple[str, int]]] = []
    for folder in ("one", "two"):
        calls: list[tuple[str, int]] = []
        (tmp_path / folder).mkdir()
        out = run_judges(episodes, contexts, cfg, out_path=tmp_path / folder / "v.jsonl",
                         load=lambda spec, c=calls: _SeedRecorder(c))  # fmt: skip
        runs.append(calls)
    assert runs[0] == runs[1]  # the same payloads with the same seeds on a rerun
    seeds = [s for _, s in runs[0]]
    assert len(seeds) == 2 * 3 * 2 * 2 and len(set(seeds)) == len(seeds)  # all distinct
    firsts = {(v.record_id, v.judge): v for v in out if v.view == "original" and v.repeat == 0}
    assert len(firsts) == 6
    assert all(v.verdict == "pass" and v.reason == "The order was cancelled." for v in out)


def test_judge_audit_refuses_a_folder_judged_with_the_old_seeds(
    shared_data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "ja"
    args = ["-q", "probe", "judge-audit", str(_retail(shared_data)), "--judge-model", STEADY,
            "--records", "2", "--repeats", "1", "--views", "original", "--out", str(out)]  # fmt: skip
    assert main(args) == 0
    config = json.loads((out / "run_config.json").read_text())
    assert config["call_seeds"] == "seed,judge,record,view,call"
    assert config["prompt"] == "reason-first" and config["max_tokens"] == 128
    del config["call_seeds"]  # as the folders judged before the fix hold it
    (out / "run_config.json").write_text(json.dumps(config))
    before = {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()}
    capsys.readouterr()
    assert main(args) == 2
    err = capsys.readouterr().err.strip()
    assert "holds verdicts drawn with the old sampling seeds" in err and "\n" not in err
    assert {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()} == before


def test_reason_first_prompt_asks_for_a_labelled_reason_then_the_verdict(
    shared_data: Path,
) -> None:
    (ep,) = select_records(list(load_episodes(_retail(shared_data))), 1, seed=0)
    contexts, _ = judge_contexts([ep], data_root=shared_data)
    ctx = next(iter(contexts.values()))
    new = judge_messages(ep, ctx, "original")
    old = judge_messages(ep, ctx, "original", "verdict-first")
    assert new[1]["content"].endswith("Reason (one sentence), then Verdict (PASS, FAIL or "
                                      "INSUFFICIENT):")  # fmt: skip
    assert "First line: 'Reason:'" in new[0]["content"]
    assert old[1]["content"].endswith("then a one-sentence reason:")
    assert new[1]["content"].rsplit("\n\n", 1)[0] == old[1]["content"].rsplit("\n\n", 1)[0]


@pytest.mark.parametrize(
    ("reply", "verdict", "reason"),
    [
        ("Reason: The agent cancelled the wrong order.\nVerdict: FAIL", "fail",
         "The agent cancelled the wrong order."),
        ("**Reason:** It exchanged both items as asked.\n**Verdict:** PASS", "pass",
         "It exchanged both items as asked."),
        ('{"reason": "No refund was issued.", "verdict": "fail"}', "fail",
         "No refund was issued."),
        ("Verdict: INSUFFICIENT\nReason: the record stops before the refund.", "insufficient",
         "the record stops before the refund."),
        ("PASS\nThe refund was issued.", "pass", "The refund was issued."),
        ("Reason: The agent did not cancel the order. Therefore, the Verdict is INSUFFICIENT.",
         "insufficient", "The agent did not cancel the order."),
        # the prompt's own option list is no verdict, nor is a reason alone
        ("Reason: hard to say.\nVerdict: PASS, FAIL or INSUFFICIENT", "unparseable", None),
        ("Reason: The agent did well.", "unparseable", None),
        # a model that reconsiders: the last labelled verdict counts
        ("Reason: It verified the user.\nVerdict: PASS\nVerdict: FAIL", "fail",
         "It verified the user."),
    ],
)  # fmt: skip
def test_parse_labelled_reply(reply: str, verdict: str, reason: str | None) -> None:
    from toolaudit.probes.judges._replies import has_reason, parse_labelled_reply

    got = parse_labelled_reply(reply)
    assert got[0] == verdict
    if reason is not None:
        assert got[1] == reason and has_reason(got[1])


def test_a_mistyped_second_judge_leaves_the_folder_as_it_was(
    shared_data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "ja"
    args = ["-q", "probe", "judge-audit", str(_retail(shared_data)), "--judge-model", STEADY,
            "--judge-model", "llama:qwenn", "--records", "2", "--repeats", "1", "--views",
            "original", "--out", str(out)]  # fmt: skip
    _seed_judges.SEEN.clear()
    assert main(args) == 2
    assert "llama:qwenn: no such GGUF file" in capsys.readouterr().err
    assert _seed_judges.SEEN == [] and not out.exists()


def test_between_judge_interval_resamples_calls_as_well_as_records() -> None:
    """Issue 54: two judges that agree on every majority but one of which flips between
    its calls have a disagreement interval that reaches above 0 once calls are resampled;
    two steady judges keep [0, 0]."""
    from toolaudit.probes.judges._seed import between_intervals

    records = [f"r{i}" for i in range(12)]
    task = {r: f"t{i // 2}" for i, r in enumerate(records)}
    steady = {(r, "original"): ["pass", "pass", "pass"] for r in records}
    flippy = {(r, "original"): ["pass", "pass", "fail"] for r in records}
    same = between_intervals({"a": steady, "b": dict(steady)}, "a", "b", task, seed=0)
    assert same["disagreement"] == [0.0, 0.0]
    shaky = between_intervals({"a": steady, "b": flippy}, "a", "b", task, seed=0)
    assert shaky["disagreement"][0] >= 0.0 and shaky["disagreement"][1] > 0.0

"""The judge protocol: payloads, views, withheld fields, parsing, resume."""

from __future__ import annotations

from pathlib import Path

import pytest

from toolaudit.probes import JudgeConfig, judge_audit, judge_records, run_one
from toolaudit.probes.harnesses.researchops._harness import RunSpec
from toolaudit.probes.judges._prompts import judge_messages
from toolaudit.probes.judges._replies import parse_verdict
from toolaudit.probes.judges._views import record_context, render_record


class _FixtureJudge:
    """TEST FIXTURE (not a judge): replies from a fixed script so the protocol's
    bookkeeping can be checked without a model. Real judges are in the slow test."""

    identity = "fixture"

    def __init__(self, replies: list[str]) -> None:
        self.replies = replies
        self.payloads: list[list[dict]] = []

    def generate(self, messages, tools=None, **kw):
        from types import SimpleNamespace

        self.payloads.append(messages)
        text = self.replies[(len(self.payloads) - 1) % len(self.replies)]
        return SimpleNamespace(
            text=text, raw=text, tool_calls=(), parse_errors=(), finish_reason="stop"
        )


@pytest.fixture(scope="module")
def episodes() -> list:
    return [run_one(RunSpec(t, p, "original", 0)) for t in (1, 2) for p in ("careful", "shortcut")]


def test_views_show_different_parts_and_withhold_identity_and_reward(episodes: list) -> None:
    ep = episodes[0]
    full = render_record(ep, "full")
    assert "RESULT" in full and "CALL submit_report" in full
    proc = render_record(ep, "procedure")
    assert "RESULT" not in proc and "submit_report" not in proc and "CALL check_constraints" in proc
    final = render_record(ep, "final_answer")
    assert final.count("CALL") == 1 and "submit_report" in final
    for view in ("full", "final_answer", "procedure"):
        text = str(judge_messages(ep, record_context(ep), view, "study"))
        assert "careful" not in text and 'reward": ' not in text and "passed" not in text
        assert "PASS, FAIL or INSUFFICIENT" in text


def test_parse_verdict_reads_first_word_else_unparseable() -> None:
    assert parse_verdict("PASS\nbecause") == "pass"
    assert parse_verdict("Verdict: Insufficient evidence") == "insufficient"
    assert parse_verdict("I think it is fine") == "unparseable"
    # the option list echoed back is no verdict (the parser the seed-protocol audit uses)
    assert parse_verdict("Answer with one word: PASS, FAIL or INSUFFICIENT") == "unparseable"


def test_judge_records_repeats_are_byte_identical_and_unparseable_counted(
    episodes: list, tmp_path: Path
) -> None:
    lm = _FixtureJudge(["PASS", "FAIL", "no idea"])
    cfg = JudgeConfig(model="fixture", n_repeats=2, temperature=0.0, prompt="study",
                      views=("full", "final_answer", "procedure"))  # fmt: skip
    out = judge_records(episodes, cfg, out_path=tmp_path / "v.jsonl", load=lambda spec: lm)
    assert len(out) == len(episodes) * 3 * 2 == len(lm.payloads)
    # Repeat r and r+1 of the same (record, view) are consecutive calls with equal payloads.
    assert all(lm.payloads[i] == lm.payloads[i + 1] for i in range(0, len(lm.payloads), 2))
    audit = judge_audit(out)
    assert audit["n_verdicts"] == 24
    assert audit["n_unparseable"] == sum(v.verdict == "unparseable" for v in out) == 8
    assert audit["judges"][0]["unparseable_share"] == pytest.approx(8 / 24)
    # Resume: every verdict is on disk, so no further call is made.
    again = judge_records(episodes, cfg, out_path=tmp_path / "v.jsonl", load=lambda s: 1 / 0)
    assert [v.verdict for v in again] == [v.verdict for v in out]


def test_judge_audit_kappa_is_sklearns() -> None:
    from sklearn.metrics import cohen_kappa_score

    from toolaudit.probes import VerdictRecord

    verdicts = ["pass", "pass", "fail", "pass", "fail", "fail"]
    native = [1.0, 0.0, 0.0, 1.0, 1.0, 0.0]
    vs = [
        VerdictRecord(
            judge="J", view="full", repeat=0, record_id=f"r{i}", verdict=v, native_reward=n
        )
        for i, (v, n) in enumerate(zip(verdicts, native, strict=True))
    ]
    got = judge_audit(vs, reference_view="full")["judges"][0]["native_kappa"]
    assert got == pytest.approx(
        cohen_kappa_score([str(v == "pass") for v in verdicts], [str(n >= 0.5) for n in native])
    )


def test_study_judge_runs_the_seed_protocol_by_default(episodes: list, tmp_path: Path) -> None:
    """One judge protocol (issue 53): the study's judge sends the payloads, seeds and
    parsing of ``probe judge-audit`` (``run_judges``), with the seed's views and the
    ``reason-first`` prompt unless told otherwise."""
    from toolaudit.probes.judges._run import JudgeAuditConfig, call_seed, run_judges

    class Seeds(_FixtureJudge):
        def generate(self, messages, tools=None, **kw):
            self.seeds = [*getattr(self, "seeds", []), kw["seed"]]
            return super().generate(messages, tools, **kw)

    reply = ["Reason: The report names the right dataset.\nVerdict: PASS"]
    study_lm, audit_lm = Seeds(reply), Seeds(reply)
    cfg = JudgeConfig(model="fixture", n_repeats=1)
    assert cfg.views == ("original", "repeat", "tool_rename", "reformat")
    assert cfg.prompt == "reason-first" and cfg.reply_tokens == 128
    verdicts = judge_records(episodes[:1], cfg, load=lambda spec: study_lm)
    contexts = {"ro-01/careful/original/0": record_context(episodes[0])}
    audit = JudgeAuditConfig(judges=("fixture",), n_repeats=1, n_records=1)
    run_judges(episodes[:1], contexts, audit, out_path=None, load=lambda spec: audit_lm)
    assert study_lm.payloads == audit_lm.payloads and study_lm.seeds == audit_lm.seeds
    assert study_lm.seeds[0] == call_seed(0, "fixture", "ro-01/careful/original/0", "original", 0)
    assert [v.verdict for v in verdicts] == ["pass"] * 4
    assert verdicts[0].reason == "The report names the right dataset."
    assert study_lm.payloads[1] == study_lm.payloads[0] != study_lm.payloads[2]
    assert "careful" not in str(study_lm.payloads)


def test_study_prompt_takes_content_cuts_only() -> None:
    from toolaudit.errors import ConfigError

    with pytest.raises(ConfigError, match="content cuts"):
        JudgeConfig(model="x", prompt="study")
    with pytest.raises(ConfigError, match="judge_views"):
        JudgeConfig(model="x", views=("sideways",))

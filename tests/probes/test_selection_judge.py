"""The policy-selection experiment and the judge audit."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.probes._simulated_judges import simulate_verdicts
from toolaudit.errors import TraceFormatError
from toolaudit.probes import VerdictRecord, judge_audit, read_verdicts
from toolaudit.probes.analysis._selection import selection_experiment


def test_selection_visible_proxy_picks_exploit_others_pick_careful(study_runs: list) -> None:
    sel = selection_experiment(study_runs)
    assert len(sel["selection_tasks"]) == 12 and len(sel["heldout_tasks"]) == 13
    chosen = {r["objective"]: r for r in sel["objectives"]}
    assert chosen["visible_proxy"]["selected"] == "proxy_exploit"
    assert chosen["tool_volume"]["selected"] == "careful"
    assert chosen["composite"]["selected"] == "careful"
    assert chosen["visible_proxy"]["heldout_ptd"] > chosen["composite"]["heldout_ptd"]
    assert chosen["visible_proxy"]["heldout_pass_rate"] < chosen["composite"]["heldout_pass_rate"]


def _v(judge: str, view: str, rep: int, rec: str, verdict: str, native: float) -> VerdictRecord:
    return VerdictRecord(
        judge=judge, view=view, repeat=rep, record_id=rec, verdict=verdict, native_reward=native
    )


def test_judge_audit_counts_flips_disagreement_and_agreement() -> None:
    vs = []
    for rec, native in (("r1", 1.0), ("r2", 0.0)):
        for view in ("original", "renamed"):
            for rep in (0, 1):
                vs.append(_v("A", view, rep, rec, "pass" if native else "fail", native))
                vs.append(_v("B", view, rep, rec, "fail", native))
    # One repeat flip for judge A on r1 (original view, repeat 1).
    vs[
        [
            i
            for i, v in enumerate(vs)
            if (v.judge, v.view, v.repeat, v.record_id) == ("A", "original", 1, "r1")
        ][0]
    ] = _v("A", "original", 1, "r1", "fail", 1.0)
    out = judge_audit(vs)
    a = next(j for j in out["judges"] if j["judge"] == "A")
    assert a["repeat_flips"]["rate"] == pytest.approx(1 / 4)
    assert a["view_flips"]["rate"] == pytest.approx(1 / 4)
    b = next(j for j in out["judges"] if j["judge"] == "B")
    assert b["native_agreement"] == 0.5 and b["repeat_flips"]["rate"] == 0.0
    assert out["between"][0]["n_records"] == 2
    assert out["missing_verdicts"] == 0


def test_judge_audit_counts_missing_verdicts() -> None:
    vs = [_v("A", "original", 0, "r1", "pass", 1.0), _v("A", "original", 1, "r2", "pass", 1.0)]
    assert judge_audit(vs)["missing_verdicts"] == 2


def test_judge_audit_on_simulated_fixture_view_flips_match_repeat_flips(
    study_runs: list,
) -> None:
    a = simulate_verdicts(study_runs, seed=3)
    assert a == simulate_verdicts(study_runs, seed=3)
    assert a != simulate_verdicts(study_runs, seed=4)
    out = judge_audit(a)
    for j in out["judges"]:
        lo, hi = j["repeat_flips"]["ci95"]
        assert lo - 0.03 <= j["view_flips"]["rate"] <= hi + 0.03
    assert out["between"][0]["disagreement"] > 0.2  # procedure vs outcome grading


def test_read_verdicts_bad_line_names_file_line_field(tmp_path: Path) -> None:
    path = tmp_path / "v.jsonl"
    path.write_text(
        '{"judge":"A","view":"o","repeat":0,"record_id":"r","verdict":"pass"}\n'
        '{"judge":"A","view":"o","repeat":0,"record_id":"r","verdict":"maybe"}\n'
    )
    with pytest.raises(TraceFormatError, match=r"v\.jsonl, line 2, field 'verdict'"):
        read_verdicts(path)

"""The gap-only ranking note is stated only where a ranking exists and the claim holds
(issue 44: a lone policy was called misranked, "rank 1 of 1", with a gap that was not
small)."""

from __future__ import annotations

from typing import Any

from toolaudit.probes.analysis._runs import policy_summary


def _cells(policy: str, vrg: float, msr: float) -> list[dict[str, Any]]:
    return [
        {"policy": policy, "condition": c, "vrg": vrg, "vrg_rescored": vrg, "msr": msr}
        for c in ("tool_rename", "reformat")
    ]


def test_a_lone_policy_is_never_called_misranked() -> None:
    (row,) = policy_summary(_cells("llm", 0.424, 0.0))
    assert row["gap_only_rank"] == 1 and not row["misranked_by_gap"]


def test_a_small_gap_that_never_passes_is_misranked_against_one_that_passes() -> None:
    rows = {
        r["policy"]: r
        for r in policy_summary(
            [*_cells("inert", 0.0, 0.0), *_cells("careful", 0.25, 0.75), *_cells("x", 0.5, 0.5)]
        )
    }
    assert rows["inert"]["misranked_by_gap"]  # rank 1 by gap, 3 of 3 by MSR
    assert not rows["careful"]["misranked_by_gap"] and not rows["x"]["misranked_by_gap"]


def test_no_note_when_the_two_rankings_agree() -> None:
    rows = policy_summary([*_cells("a", 0.1, 0.0), *_cells("b", 0.0, 0.0)])
    assert not any(r["misranked_by_gap"] for r in rows)  # both never pass: MSR ties

"""Paired contrasts against the clean arm, on rows with known answers."""

from __future__ import annotations

import math

from toolaudit.faults import summarize
from toolaudit.faults._summary import table_rows


def _row(
    task,
    arm,
    k,
    *,
    s0,
    s1,
    h=0.5,
    lead="get_order_details",
    ref="get_order_details",
    v=0.5,
    pay=None,
    policy=None,
    s0_first=None,
):
    return {
        "task": task, "arm": arm, "k": k, "s0": s0, "s1": s1, "g": s1 - s0, "entropy": h,
        "leading_action": lead, "reference_action": ref, "agrees_reference": lead == ref,
        "p_reread": v, "p_write": 0.0, "p_reply": 0.1, "payment_in_prefix": pay,
        "policy_mediated": policy, "s0_first": s0 if s0_first is None else s0_first,
    }  # fmt: skip


def test_summarize_counts_paired_movement():
    rows = []
    for i in range(6):
        rows.append(_row(str(i), "clean", 0, s0=1.0, s1=0.5, v=0.2))
        # failed: S0 up on all, G up on all but one, leader displaced on two
        rows.append(
            _row(
                str(i),
                "failed",
                0,
                s0=3.0,
                s1=3.0 if i else 2.0,
                lead="reply" if i < 2 else "get_order_details",
                v=0.9,
            )
        )  # noqa: E501
    s = summarize(rows, arms=["clean", "failed"], k_max=0)
    (cell,) = s["cells"]
    assert cell["n"] == 6 and cell["n_ds0_pos"] == 6 and cell["n_ds0_differs"] == 6
    assert cell["n_dg_pos"] == 5  # G: clean -0.5; failed 0.0 (five) and -1.0 (one)
    assert cell["net_dagree"] == -2 and cell["leader_changes"] == 2
    assert cell["net_sgn_dp_reread"] == 6
    assert math.isclose(cell["p_sign_dg"], 2 * 7 / 64)  # two-sided sign test, 5 of 6
    assert s["clean"]["n_g_negative"] == 6


def test_summarize_pairs_within_task_and_step_only():
    rows = [
        _row("a", "clean", 0, s0=1.0, s1=1.0),
        _row("a", "failed", 1, s0=9.0, s1=9.0),  # no clean row at k=1: not paired
        _row("b", "failed", 0, s0=9.0, s1=9.0),  # no clean row for task b: not paired
    ]
    s = summarize(rows, arms=["clean", "failed"], k_max=1)
    assert s["cells"] == []


def test_payment_rows_grouped_by_true_value_in_prefix():
    rows = [
        _row("a", "clean", 0, s0=1.0, s1=0.5),
        _row("a", "falsified_payment", 0, s0=1.0, s1=0.7, pay=True),
        _row("b", "clean", 0, s0=1.0, s1=0.5),
        _row("b", "falsified_payment", 0, s0=1.0, s1=0.4, pay=False),
    ]
    s = summarize(rows, arms=["clean", "falsified_payment"], k_max=0)
    by = s["falsified_payment_by_prefix"]
    assert (by["in_prefix"]["n"], by["in_prefix"]["n_dg_pos"]) == (1, 1)
    assert (by["not_in_prefix"]["n"], by["not_in_prefix"]["n_dg_pos"]) == (1, 0)
    header, table = table_rows(s)
    assert header[0] == "arm" and table[0][:3] == ["falsified_payment", 0, 2]


def test_status_rows_grouped_by_policy_mediation():
    rows = []
    for i, policy in enumerate([True, True, False]):
        rows.append(_row(str(i), "clean", 0, s0=1.0, s1=0.5))
        rows.append(_row(str(i), "falsified_status", 0, s0=1.0, s1=0.6, policy=policy))
    s = summarize(rows, arms=["clean", "falsified_status"], k_max=0)
    by = s["falsified_status_by_policy"]
    assert by["policy_mediated"]["n"] == 2 and by["policy_mediated"]["n_dg_pos"] == 2
    assert by["not_policy_mediated"]["n"] == 1


def test_s0_separation_per_token_and_first_token():
    rows = []
    for i in range(3):
        rows.append(_row(str(i), "clean", 0, s0=1.0, s1=0.5, s0_first=2.0))
        rows.append(_row(str(i), "failed", 0, s0=4.0 + i, s1=4.0, s0_first=9.0))
        # a falsified row whose per-token S0 enters the failed range but whose first token
        # does not: per-token overlaps, first-token separates
        rows.append(_row(str(i), "falsified_status", 0, s0=5.0 if i == 0 else 1.0, s1=0.5))
    sep = summarize(rows, arms=["clean", "failed", "falsified_status"], k_max=0)["s0_separation"]
    assert sep["per_token"]["failed_min"] == 3.0 and sep["per_token"]["n_others_inside"] == 1
    assert sep["first_token"]["n_others_inside"] == 0 and sep["first_token"]["n_failed_pos"] == 3

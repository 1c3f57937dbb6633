"""Paired contrasts against the clean arm, on rows with known answers."""

from __future__ import annotations

import math

from toolaudit.faults import summarize, table_rows


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
):
    return {
        "task": task, "arm": arm, "k": k, "s0": s0, "s1": s1, "g": s1 - s0, "entropy": h,
        "leading_action": lead, "reference_action": ref, "agrees_reference": lead == ref,
        "p_reread": v, "p_write": 0.0, "p_reply": 0.1, "payment_in_prefix": pay,
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
    assert s["falsified_payment_by_prefix"] == {
        "in_prefix": {"n": 1, "n_dg_pos": 1},
        "not_in_prefix": {"n": 1, "n_dg_pos": 0},
    }
    header, table = table_rows(s)
    assert header[0] == "arm" and table[0][:3] == ["falsified_payment", 0, 2]

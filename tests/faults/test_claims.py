"""The seed's claims judged on a run: the sign test decides a direction claim, Fisher's
exact test against the seed's count decides a count claim."""

from __future__ import annotations

from typing import Any

from toolaudit.faults._claims import claim_sentence, seed_claims


def _summary(*, s0_up: int, s0_down: int, p_s0: float, below: int, agree: float) -> dict[str, Any]:
    failed = {"arm": "failed", "k": 0, "n": s0_up + s0_down, "n_ds0_pos": s0_up,
              "n_ds0_differs": s0_up + s0_down, "p_sign_ds0": p_s0, "n_dg_pos": 3,
              "n_dg_neg": 3, "p_sign_dg": 1.0, "n_dp_reread_pos": 0, "n_dp_reread_neg": 0,
              "p_sign_dp_reread": float("nan")}  # fmt: skip
    groups = {"in_prefix": {"n": 0, "n_dg_pos": 0, "p_sign_dg": float("nan")},
              "not_in_prefix": {"n": 6, "n_dg_pos": 6, "p_sign_dg": 0.03}}  # fmt: skip
    return {
        "cells": [failed],
        "falsified_payment_by_prefix": groups,
        "clean": {"n": 20, "n_entropy_below_headroom": below, "agreement_by_k": {"0": agree}},
    }


def test_seed_claims_follow_the_sign_test_and_fishers_test() -> None:
    got = {f.name.removeprefix("faults.seed."): f for f in seed_claims(
        _summary(s0_up=10, s0_down=0, p_s0=0.002, below=12, agree=0.0))}  # fmt: skip
    assert got["failed_s0"].verdict == "reproduces"
    assert got["failed_g"].verdict == "cannot_judge"  # 3 up, 3 down
    assert got["failed_reread"].verdict == "cannot_judge" and got["failed_reread"].n == 0
    assert got["payment_in_prefix_g"].verdict == "cannot_judge"  # no rows
    assert got["payment_not_in_prefix_g"].verdict == "contradicts"  # 6/6 against 0/6
    assert got["clean_entropy_floor"].verdict == "not_distinguishable"  # 12/20 vs 31/53
    assert got["clean_agreement_k0"].verdict == "contradicts"  # 0/20 vs 33/53
    assert got["status_g"].verdict == "cannot_judge" and got["status_g"].n == 0
    text = claim_sentence(got["failed_s0"])
    assert "'F raises S0 at the site' (53/53 up in the seed): reproduces" in text
    assert "10 up, 0 down" in text and "p = 0.002" in text


def test_a_significant_opposite_direction_contradicts() -> None:
    (s0, *_) = seed_claims(_summary(s0_up=0, s0_down=10, p_s0=0.002, below=0, agree=0.5))
    assert s0.verdict == "contradicts"

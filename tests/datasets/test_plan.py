"""The count plan: the seed's Table 2 at scale 1, proportional shrinking, bad scales."""

from __future__ import annotations

import math

import pytest

from toolaudit.datasets import validate_scale
from toolaudit.datasets._plan import TCR_TABLE2, plan_counts
from toolaudit.errors import ConfigError

# Table 2 of seeds/leakage-audit-pt2d-redaction.txt, typed in independently of the code.
SEED_TABLE2 = {
    ("C0", "train"): (12_940, 3_483),
    ("C0", "val"): (1_438, 397),
    ("C1", "test"): (1_004, 45),
    ("C2", "test"): (994, 38),
    ("C3", "test"): (968, 30),
    ("C4", "test"): (968, 109),
    ("C5", "test"): (964, 42),
}


def test_plan_counts_match_seed_table2_at_scale_one() -> None:
    cells = plan_counts(scale=1.0)
    assert {(c.group, c.split): (c.total, c.positives) for c in cells} == SEED_TABLE2
    test = [c for c in cells if c.split == "test"]
    assert sum(c.total for c in test) == 4_898
    assert sum(c.positives for c in test) == 264
    assert [c.group for c in cells] == ["C0", "C0", "C1", "C2", "C3", "C4", "C5"]
    assert plan_counts() == list(TCR_TABLE2)


@pytest.mark.parametrize("scale", [0.5, 0.1, 0.01, 0.001, 1e-9])
def test_plan_counts_keep_both_classes_at_any_scale(scale: float) -> None:
    for cell in plan_counts(scale=scale):
        assert cell.positives >= 2
        assert cell.negatives >= 2


def test_plan_counts_shrink_proportionally() -> None:
    cells = plan_counts(scale=0.1)
    for cell, full in zip(cells, TCR_TABLE2, strict=True):
        assert abs(cell.positives - full.positives * 0.1) <= 0.5
        assert abs(cell.negatives - full.negatives * 0.1) <= 0.5
    assert (cells[0].total, cells[0].positives) == (1_294, 348)


def test_plan_counts_double_table2_at_scale_two() -> None:
    cells = plan_counts(scale=2)
    for cell, full in zip(cells, TCR_TABLE2, strict=True):
        assert (cell.total, cell.positives) == (2 * full.total, 2 * full.positives)
    assert sum(c.total for c in cells) == 2 * 19_276


def test_plan_counts_round_half_up_above_one() -> None:
    # C2 test has 38 positives: 38 x 2.25 = 85.5 rounds up to 86, as below scale 1
    assert plan_counts(scale=2.25)[3].positives == 86


@pytest.mark.parametrize("bad", [0, -0.5, 4.5, math.nan, math.inf, "abc", None])
def test_validate_scale_rejects_out_of_range(bad: object) -> None:
    with pytest.raises(ConfigError, match=r"invalid scale=.*allowed: a number in \(0, 4\]"):
        validate_scale(bad)  # type: ignore[arg-type]


def test_validate_scale_accepts_numeric_strings() -> None:
    assert validate_scale("0.25") == 0.25  # type: ignore[arg-type]


@pytest.mark.parametrize("good", [1.5, 2, 4])
def test_validate_scale_accepts_up_to_four(good: float) -> None:
    assert validate_scale(good) == float(good)

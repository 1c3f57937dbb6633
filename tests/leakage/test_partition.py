"""Partitions: split/group selections and grouped cross-validation."""

from __future__ import annotations

import numpy as np
import pytest

from toolaudit.errors import ConfigError, DataError
from toolaudit.leakage import Selection
from toolaudit.leakage._partition import grouped_folds, make_partition
from toolaudit.traces import Example


def _ex(i, split="", group="g"):
    return Example(id=str(i), label=i % 2, group=group, split=split)


def test_make_partition_defaults_to_train_test():
    rows = [_ex(i, "train" if i < 6 else "test") for i in range(10)]
    part = make_partition(rows)
    assert part.mode == "holdout"
    assert part.folds[0][0].tolist() == list(range(6))
    assert part.folds[0][1].tolist() == [6, 7, 8, 9]


def test_make_partition_selects_by_group_and_complement():
    rows = [_ex(i, group=f"C{i % 3}") for i in range(9)]
    part = make_partition(rows, fit="group=C0", eval=None)
    assert part.folds[0][0].tolist() == [0, 3, 6]
    assert part.folds[0][1].tolist() == [1, 2, 4, 5, 7, 8]


def test_make_partition_single_pool_uses_grouped_cv_without_splitting_groups():
    rows = [_ex(i, group=f"T{i % 7}") for i in range(70)]
    part = make_partition(rows, cv_folds=3)
    assert part.mode == "grouped_cv" and len(part.folds) == 3
    assert sorted(part.eval_rows.tolist()) == list(range(70))
    for fit, ev in part.folds:
        assert not {rows[i].group for i in fit} & {rows[i].group for i in ev}


def test_grouped_folds_needs_two_groups():
    with pytest.raises(DataError, match="at least 2 groups"):
        grouped_folds(["a", "a"], 5)


def test_selection_parse_rejects_unknown_field():
    with pytest.raises(ConfigError, match="invalid fit="):
        Selection.parse("label=1", option="fit")
    sel = Selection.parse("split=train,val", option="fit")
    assert sel.values == ("train", "val")
    assert np.array_equal(sel.mask([_ex(0, "val"), _ex(1, "test")]), [True, False])


def test_make_partition_empty_selection_names_it():
    rows = [_ex(i, "train") for i in range(4)]
    with pytest.raises(DataError, match="eval partition \\(split=test\\) selects no examples"):
        make_partition(rows, fit="split=train", eval="split=test")

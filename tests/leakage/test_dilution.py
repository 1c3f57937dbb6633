"""Dilution helpers and the prefix lookup."""

from __future__ import annotations

import numpy as np

from toolaudit.leakage._dilution import draw_slots
from toolaudit.leakage._prefix import prefix_scores
from toolaudit.leakage._synthetic import synthetic_text


def test_synthetic_text_repeats_or_clips_to_length():
    assert synthetic_text("abc", 7) == "abcabca"
    assert synthetic_text("abcdef", 4) == "abcd"
    assert synthetic_text("", 5) == ""


def test_draw_slots_is_seeded_and_label_free():
    rows = np.arange(5)
    a = draw_slots(5, rows, 10, 3, np.random.default_rng([1, 0]))
    b = draw_slots(5, rows, 10, 3, np.random.default_rng([1, 0]))
    c = draw_slots(5, rows, 10, 3, np.random.default_rng([1, 1]))
    assert np.array_equal(a[0], b[0]) and a[0].shape == (5, 3)
    assert not np.array_equal(a[0], c[0])


def test_prefix_scores_learn_rates_on_fit_rows_only():
    values = ["21a", "21b", "17c", "17d", "21e", "17f", "99z", None]
    y = np.array([1, 1, 0, 0, 1, 1, 0, 1])
    fit, ev = np.arange(4), np.arange(4, 8)
    s = prefix_scores(values, y, fit, ev, 2)
    # "21" -> 1.0, "17" -> 0.0, unseen "99" and missing -> base rate 0.5
    assert s.tolist() == [1.0, 0.0, 0.5, 0.5]


def test_pool_tools_for_drops_only_carrier_duplicates():
    from toolaudit.leakage._dilution import pool_tools_for
    from toolaudit.leakage._provenance import TokenClass

    def cls(name, tool, links):
        return TokenClass(name, "(x)", "", (tool,), ("f",), 1, 1, (), 1.0, (), tuple(links))

    classes = [
        cls("t3.path", "t3", ["t5.id"]),
        cls("t5.id", "t5", ["t3.path"]),
        cls("t1.seq", "t1", ["t2.seq"]),  # linked, but not to the carrier
        cls("t2.seq", "t2", ["t1.seq"]),
    ]
    assert pool_tools_for("t3", ["t1", "t2", "t3", "t4", "t5"], classes) == ["t1", "t2", "t4"]

"""Dilution helpers and the prefix lookup."""

from __future__ import annotations

import numpy as np

from toolaudit.leakage._dilution import draw_slots, synthetic_text
from toolaudit.leakage._prefix import prefix_scores


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


def test_append_section_equals_joined_scope_counts(adversarial):
    """The synthetic sweep's running sum (one slot at a time) equals the counts of the
    joined sections, word boundary bigrams included."""
    from toolaudit.leakage import PT2DEngine
    from toolaudit.leakage._features import FEATURE_SETS

    engine = PT2DEngine(adversarial, list(FEATURE_SETS.values()))
    corpus = engine.corpus
    for analyzer in ("word", "char_wb"):
        acc = corpus.scope_counts(analyzer, ["t2"])
        prev = corpus.last_tokens(["t2"]) if analyzer == "word" else None
        for name in ("t0", "t3"):
            acc, prev = corpus.append_section(analyzer, acc, prev, name)
        joined = corpus.scope_counts(analyzer, ["t2", "t0", "t3"])
        width = max(acc.shape[1], joined.shape[1])
        acc.resize((acc.shape[0], width))
        joined.resize((joined.shape[0], width))
        assert (acc != joined).nnz == 0
        rows = np.array([3, 1, 40])
        sub = corpus.scope_counts(analyzer, ["t2", "t0", "t3"], rows=rows)
        sub.resize((sub.shape[0], width))
        assert (sub != joined[rows]).nnz == 0


def _same_csr(a, b) -> bool:
    """Identical stored arrays (not only equal values): dtype, shape, indptr, indices."""
    a, b = a.tocsr(), b.tocsr()
    return (
        a.shape == b.shape
        and a.dtype == b.dtype
        and np.array_equal(a.indptr, b.indptr)
        and np.array_equal(a.indices, b.indices)
        and np.array_equal(a.data, b.data)
    )


def test_append_section_blocks_equals_the_whole_matrix_append(adversarial):
    """The running sum built in row blocks on disk (block of 16 rows < 90 rows) is the
    whole-matrix running sum exactly, for both analyzers, word boundary bigrams included
    (``t1`` and ``t3`` have empty and whitespace-only sections, so ``prev`` carries over)."""
    from toolaudit.leakage import PT2DEngine
    from toolaudit.leakage._corpus import _widen
    from toolaudit.leakage._features import FEATURE_SETS

    engine = PT2DEngine(adversarial, list(FEATURE_SETS.values()))
    corpus = engine.corpus
    order = ["t2", "t1", "t0", "t3"]
    for analyzer in ("word", "char_wb"):
        store = corpus.mats[analyzer]
        acc = corpus.scope_counts(analyzer, order[:1])
        prev = prev_b = corpus.last_tokens(order[:1]) if analyzer == "word" else None
        corpus.copy_section(analyzer, order[0], "__acc", block_rows=16)
        assert _same_csr(_widen(store["__acc"], acc.shape[1]), acc)
        for name in order[1:]:
            acc, prev = corpus.append_section(analyzer, acc, prev, name)
            prev_b = corpus.append_section_blocks(analyzer, "__acc", prev_b, name, block_rows=16)
            assert _same_csr(store["__acc"], acc)
            if analyzer == "word":
                assert np.array_equal(prev, prev_b)
        joined = corpus.scope_counts(analyzer, order)
        assert (store["__acc"] != joined).nnz == 0
        # word: the boundary bigrams were there to be matched (char_wb has none)
        extra = int(joined.sum()) - sum(int(store[n].sum()) for n in order)
        assert (extra > 0) if analyzer == "word" else (extra == 0)
        store.pop("__acc")

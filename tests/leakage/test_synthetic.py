"""Synthetic slots as word recipes equal the tokenized slot texts."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.feature_extraction.text import CountVectorizer

from toolaudit.leakage._dilution import _char_points, _word_points, draw_slots, slot_texts
from toolaudit.traces import Example, ToolSection

# sections that exercise every case of the word arithmetic: copies that fuse (no
# whitespace at either end), leading or trailing whitespace, a single word without any
# whitespace (split whole), whitespace only, runs of mixed whitespace, unicode whose
# lowercase depends on context (final sigma) or changes length (dotted capital I)
TRICKY = [
    "alpha beta\tgamma",
    " lead word",
    "trail word \n",
    "oneword",
    "x",
    "ab cd",
    "  \t ",
    "ΟΔΟΣ ΟΔΟΣ",
    "İstanbul İzmir ok",
    "k: v\nkey2: value_2\n  pos=1 res=C hydro=+2.5\nend",
    "a  b   c    d",
    "ΣΣΣ",
    "z\u3000y",
]


def _examples(n: int = 60, seed: int = 3) -> list[Example]:
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        sections = []
        for t in range(3):
            k = int(rng.integers(1, 4))
            text = "".join(
                str(rng.choice(TRICKY)) + ("" if rng.random() < 0.5 else " ") for _ in range(k)
            )
            if rng.random() < 0.3:
                text = str(rng.choice(TRICKY))
            sections.append(ToolSection(name=f"t{t}", content=text))
        split = "train" if i < 40 else "test"
        out.append(Example(id=f"e{i}", label=i % 2, group="g", split=split, tools=sections))
    return out


def _triplets(mat: sp.csr_matrix, names: list[str]) -> set[tuple[int, str, int]]:
    coo = sp.coo_matrix(mat)
    return {
        (int(r), names[int(c)], int(v)) for r, c, v in zip(coo.row, coo.col, coo.data, strict=True)
    }


def _setup(spec_name: str):
    from toolaudit.leakage import PT2DEngine
    from toolaudit.leakage._features import FEATURE_SETS
    from toolaudit.leakage._partition import make_partition

    examples = _examples()
    spec = FEATURE_SETS[spec_name]
    engine = PT2DEngine(examples, [spec])
    texts = engine.columns.texts
    n = len(examples)
    rows = np.arange(n)
    pool_tools = ["t0", "t2"]
    pool = [texts[t][i] for t in pool_tools for i in rows if texts[t][i]]
    index = [(t, np.asarray([i for i in rows if texts[t][i]], dtype=np.int64)) for t in pool_tools]
    lengths = np.array([len(p) for p in pool], dtype=np.int64)
    k_max = 6
    # two streams, and some rows drawn by neither
    draws = [
        (rows[:25], *draw_slots(n, rows[:25], len(pool), k_max, np.random.default_rng([5, 0]))),
        (rows[30:], *draw_slots(n, rows[30:], len(pool), k_max, np.random.default_rng([5, 1]))),
    ]
    y = np.array([e.label for e in examples])
    part = make_partition(examples)
    return engine, spec, texts, pool, index, lengths, draws, y, part


def _reference(texts, draws, pool, k, analyzer, ngram_range):
    n = len(texts["t1"])
    joined = [texts["t1"][i] for i in range(n)]
    for j in range(k):
        slot = slot_texts(n, draws, pool, j)
        joined = [a + "\n" + b for a, b in zip(joined, slot, strict=True)]
    vec = CountVectorizer(analyzer=analyzer, ngram_range=ngram_range)
    mat = vec.fit_transform(joined)
    return _triplets(mat, vec.get_feature_names_out().tolist())


def test_word_recipes_equal_tokenized_slots():
    from toolaudit.leakage._synthetic import SlotPlanner

    engine, spec, texts, pool, index, lengths, draws, y, part = _setup("char_wb_3_5")
    planner = SlotPlanner(engine.corpus, pool, index)
    ks = [1, 2, 6]
    points = _char_points(engine, planner, "t1", spec, part, y, draws, lengths, ks)
    rows = np.arange(len(y))
    for k in ks:
        counts, ids = points[k].count_matrix(rows)
        assert (counts.data > 0).all()
        ours = _triplets(counts, engine.terms("char_wb", ids))
        assert ours == _reference(texts, draws, pool, k, "char_wb", (3, 5))
    # the repeat counts reached 2 and more, and every kind of section was drawn
    assert max(len(t) for t in slot_texts(len(y), draws, pool, 0)) > 2 * lengths.min()
    assert planner.whole.any() and planner.merge.any() and (~planner.merge).any()


def test_word_feature_slots_equal_tokenized_slots():
    engine, spec, texts, pool, index, lengths, draws, y, part = _setup("word_1_2")
    ks = [1, 2, 6]
    points = _word_points(engine, "t1", part, y, draws, pool, ks)
    rows = np.arange(len(y))
    for k in ks:
        counts, ids = points[k].count_matrix(rows)
        ours = _triplets(counts, engine.terms("word", ids))
        assert ours == _reference(texts, draws, pool, k, "word", (1, 2))


@pytest.mark.parametrize("threads", [1, 2, 3])
def test_slot_statistics_and_designs_do_not_depend_on_threads(threads):
    from toolaudit.leakage._synthetic import SlotPlanner

    engine, spec, texts, pool, index, lengths, draws, y, part = _setup("char_wb_3_5")
    planner = SlotPlanner(engine.corpus, pool, index)
    fit = part.folds[0][0]
    out = []
    for th in (1, threads):
        engine.threads = th
        points = _char_points(engine, planner, "t1", spec, part, y, draws, lengths, [2, 6])
        d = engine.design(points[6], spec, fit, part.folds[0][1])
        out.append((points[2].term_stats(fit), d.x_fit, d.x_eval))
    (s1, f1, e1), (s2, f2, e2) = out
    assert all(np.array_equal(a, b) for a, b in zip(s1, s2, strict=True))
    assert np.array_equal(f1.data, f2.data) and np.array_equal(f1.indices, f2.indices)
    assert np.array_equal(e1.toarray(), e2.toarray())

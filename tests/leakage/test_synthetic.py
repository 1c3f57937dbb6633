"""Synthetic slots counted from the pool's words equal the tokenized slot texts."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from toolaudit.leakage._dilution import _slot_arrays, draw_slots, slot_texts
from toolaudit.traces import Example, ToolSection

# sections that exercise every case of the word arithmetic: copies that fuse (no
# whitespace at either end), leading or trailing whitespace, a single word without any
# whitespace (tokenized whole), whitespace only, runs of mixed whitespace, unicode whose
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


def _triplets(mat: sp.csr_matrix, keys: np.ndarray) -> set[tuple[int, int, int]]:
    coo = mat.tocoo()
    return set(zip(coo.row.tolist(), keys[coo.col].tolist(), coo.data.tolist(), strict=True))


@pytest.mark.parametrize("block_rows", [7, 1024])
def test_word_counted_slots_equal_tokenized_slots(block_rows):
    from toolaudit.leakage import PT2DEngine
    from toolaudit.leakage._features import FEATURE_SETS
    from toolaudit.leakage._synthetic import SlotCounter

    engine = PT2DEngine(_examples(), [FEATURE_SETS["char_wb_3_5"]])
    corpus = engine.corpus
    store = corpus.mats["char_wb"]
    texts = engine.columns.texts
    n = corpus.n_rows
    rows = np.arange(n)
    pool_tools = ["t0", "t2"]
    pool = [texts[t][i] for t in pool_tools for i in rows if texts[t][i]]
    index = [(t, np.asarray([i for i in rows if texts[t][i]], dtype=np.int64)) for t in pool_tools]
    lengths = np.array([len(p) for p in pool], dtype=np.int64)
    counter = SlotCounter(corpus, pool, index)
    k_max = 6
    # two streams, and some rows drawn by neither
    draws = [
        (rows[:25], *draw_slots(n, rows[:25], len(pool), k_max, np.random.default_rng([5, 0]))),
        (rows[30:], *draw_slots(n, rows[30:], len(pool), k_max, np.random.default_rng([5, 1]))),
    ]
    corpus.copy_section("char_wb", "t1", "__old")
    corpus.copy_section("char_wb", "t1", "__new")
    done = 0
    for k in (1, 2, 6):
        for j in range(done, k):
            corpus.add_sections({f"__s{j}": slot_texts(n, draws, pool, j)}, analyzers=("char_wb",))
            corpus.append_section_blocks("char_wb", "__old", None, f"__s{j}")
            corpus.drop_sections([f"__s{j}"])
        slots = [_slot_arrays(n, draws, lengths, j) for j in range(done, k)]
        counter.append("__new", slots, block_rows=block_rows)
        done = k
        keys = corpus.tables["char_wb"].keys
        old, new = store["__old"], store["__new"]
        assert new.dtype == old.dtype and new.nnz == old.nnz
        assert (new.data > 0).all()
        assert _triplets(new, keys) == _triplets(old, keys)
    # the repeat counts reached 2 and more, and every kind of section was drawn
    assert max(len(t) for t in slot_texts(n, draws, pool, 0)) > 2 * lengths.min()
    assert counter.whole.any() and counter.merge.any() and (~counter.merge).any()
    counter.close()
    assert "__syn_pool" not in store

"""Synthetic dilution slots counted from the pool's words, never re-tokenized (char_wb).

A synthetic slot is a pool section ``S`` repeated or clipped to a target length ``L``:
``S * m + S[:r]`` with ``m = L // len(S)`` and ``r = L % len(S)``. char_wb n-grams are
extracted from each whitespace-delimited word on its own, so the counts of any text are
the sum, over its words, of each word's counts. The words of ``S * m + S[:r]`` are the
words of ``S`` (m times), of the complete words of the prefix ``S[:r]``, and a few
strings made where the pieces touch:

* where one copy of ``S`` ends and the next begins without whitespace, the last word of
  ``S`` and its first word become one word (the *junction*);
* the prefix may end inside a word (the *partial* word), and when ``S`` neither starts
  nor ends with whitespace, the prefix's first word joins the last word of the copy
  before it.

So a slot's counts are ``m`` times the pool section's stored counts, plus (complete
prefix words, with +-1 corrections for merged words) times a per-word count matrix, plus
the counts of at most one odd string per row and slot, which is the only slot text
tokenized (the debug log gives both sizes for each append).

The counts are exactly the tokenized slot's (``tests/leakage/test_synthetic.py`` checks
equal matrices against ``slot_texts`` + ``add_sections`` on adversarial text). Sections
that contain no whitespace at all (the copies fuse into one word), and any section whose
lowercased form splits differently, are tokenized as whole slot text instead.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from toolaudit.leakage._corpus import APPEND_BLOCK_ROWS, SectionCorpus, _widen
from toolaudit.leakage._ngrams import _whitespace_table, char_wb_chunk

logger = logging.getLogger(__name__)

#: Characters per tokenizer call when the pool's words are counted.
_CHUNK_CHARS = 2_000_000


def _ranges(starts: np.ndarray, stops: np.ndarray) -> np.ndarray:
    """Concatenation of ``arange(a, b)`` for each pair (empty where ``b <= a``)."""
    lens = np.maximum(stops - starts, 0)
    total = int(lens.sum())
    if total == 0:
        return np.empty(0, dtype=np.int64)
    first = np.cumsum(lens) - lens
    return np.repeat(starts - first, lens) + np.arange(total, dtype=np.int64)


def _summed(parts: Sequence[sp.spmatrix], shape: tuple[int, int]) -> sp.csr_matrix:
    """The sum of sparse matrices of one shape (canonical CSR, no explicit zeros), added
    pairwise in a balanced tree, the first (largest) part last: successive ``+`` re-copied
    the growing sum once per part, and one sort of all entries was slower still."""
    if not parts:
        return sp.csr_matrix(shape, dtype=np.int64)
    level = []
    for part in parts[1:]:
        mat = sp.csr_matrix(part, dtype=np.int64)
        mat.sum_duplicates()
        level.append(mat)
    while len(level) > 1:
        nxt = [level[i] + level[i + 1] for i in range(0, len(level) - 1, 2)]
        if len(level) % 2:
            nxt.append(level[-1])
        level = nxt
    out = sp.csr_matrix(parts[0], dtype=np.int64)
    out.sum_duplicates()
    if level:
        out = sp.csr_matrix(out + level[0])
    out.eliminate_zeros()
    out.sort_indices()
    return out


@dataclass(slots=True)
class _Slot:
    """One slot's plan for every row: source, repeat count, remainder and prefix words."""

    src: np.ndarray  # pool entry per row, -1 where no stream drew the row
    m: np.ndarray
    r: np.ndarray
    c: np.ndarray  # complete words of the prefix S[:r]
    whole: np.ndarray  # rows whose slot is tokenized as text (see module docstring)


class SlotCounter:
    """Counts of synthetic slots over ``pool`` (char_wb only), written onto a running sum.

    ``pool_index`` names, for each pool entry, the stored section and row whose counts
    are the entry's (the audit's pool is a list of section texts). Everything large
    (the pool's counts, the per-word counts, the word positions) is kept in the section
    store on disk and read only while slots are appended.
    """

    def __init__(
        self,
        corpus: SectionCorpus,
        pool: Sequence[str],
        pool_index: Sequence[tuple[str, np.ndarray]],
    ) -> None:
        if corpus.book is None or corpus.spec.char_range is None:
            raise ValueError("synthetic slot counts need the char_wb analyzer")
        self.corpus = corpus
        self.pool = pool
        self.store = corpus.mats["char_wb"]
        self.table = corpus.tables["char_wb"]
        n_pool = len(pool)
        self.plen = np.fromiter((len(s) for s in pool), dtype=np.int64, count=n_pool)
        # the pool's stored counts, stacked in pool order
        n_cols = self.table.size
        self.store.write_rows(
            "__syn_pool",
            (
                _widen(self.store.rows(name, rows[a : a + APPEND_BLOCK_ROWS]), n_cols)
                for name, rows in pool_index
                for a in range(0, int(rows.size), APPEND_BLOCK_ROWS)
            ),
            n_cols=n_cols,
        )
        self._index_words()

    # -- the pool's words ---------------------------------------------------------------

    def _index_words(self) -> None:
        """Word spans (original coordinates), word ids and per-word counts of the pool."""
        table = _whitespace_table()
        ids: dict[str, int] = {}
        wid, wstart, wend = [], [], []
        n_words = np.zeros(len(self.pool), dtype=np.int64)
        lead = np.zeros(len(self.pool), dtype=bool)
        trail = np.zeros(len(self.pool), dtype=bool)
        regular = np.ones(len(self.pool), dtype=bool)
        for a, b in self._chunks():
            texts = self.pool[a:b]
            arr = np.frombuffer("\n".join(texts).encode("utf-32-le"), dtype=np.uint32)
            ws = table[arr]
            nonws = ~ws
            begin = np.flatnonzero(nonws & np.concatenate([[True], ws[:-1]]))
            end = np.flatnonzero(nonws & np.concatenate([ws[1:], [True]])) + 1
            offs = np.concatenate([[0], np.cumsum(self.plen[a:b] + 1)])
            owner = np.searchsorted(offs, begin, side="right") - 1
            counts = np.bincount(owner, minlength=b - a)
            words = []
            for i, text in enumerate(texts):
                low = text.lower().split()
                if len(low) != counts[i]:  # lowercasing changed the split: tokenize as text
                    regular[a + i] = False
                    low = [""] * int(counts[i])
                words.extend(low)
                if text:
                    lead[a + i] = text[0].isspace()
                    trail[a + i] = text[-1].isspace()
            wid.append(
                np.fromiter(
                    (ids.setdefault(w, len(ids)) for w in words), dtype=np.int64, count=len(words)
                )
            )
            wstart.append(begin - offs[owner])
            wend.append(end - offs[owner])
            n_words[a:b] = counts
        self.n_words = n_words
        self.off = np.concatenate([[0], np.cumsum(n_words)])
        wid_all = np.concatenate(wid) if wid else np.empty(0, np.int64)
        start_all = np.concatenate(wstart) if wstart else np.empty(0, np.int64)
        end_all = np.concatenate(wend) if wend else np.empty(0, np.int64)
        has = n_words > 0
        self.first = np.full(len(self.pool), -1, dtype=np.int64)
        self.last = np.full(len(self.pool), -1, dtype=np.int64)
        self.first[has] = wid_all[self.off[:-1][has]]
        self.last[has] = wid_all[self.off[1:][has] - 1]
        # copies of S fuse at their ends when S neither starts nor ends with whitespace
        self.merge = has & ~lead & ~trail
        # no whitespace at all: every copy is one word, so the slot is one new word
        self.whole = ~regular | (self.merge & (n_words == 1))
        junction = np.full(len(self.pool), -1, dtype=np.int64)
        for p in np.flatnonzero(self.merge & ~self.whole).tolist():
            o0, o1 = int(self.off[p]), int(self.off[p + 1]) - 1
            s = self.pool[p]
            word = (s[start_all[o1] : end_all[o1]] + s[start_all[o0] : end_all[o0]]).lower()
            junction[p] = ids.setdefault(word, len(ids))
        self.junction = junction
        # key that grows along the flat word arrays: entry base + end offset
        self.base = np.concatenate([[0], np.cumsum(self.plen + 1)])[:-1]
        n_flat = int(end_all.size)
        owner_flat = np.repeat(np.arange(len(self.pool), dtype=np.int64), n_words)
        arrays: dict[str, np.ndarray] = {
            "wid": wid_all,
            "wstart": start_all,
            "gend": self.base[owner_flat] + end_all if n_flat else end_all,
        }
        for name, arr in arrays.items():
            self.store.put_array(f"__syn_{name}", arr)
        del arrays
        words = list(ids)  # in id order
        self.store["__syn_words"] = self._counts(words)
        logger.debug(
            "synthetic pool: %d sections, %d words, %d distinct, %d tokenized whole",
            len(self.pool),
            n_flat,
            len(words),
            int(self.whole.sum()),
        )

    def _chunks(self) -> Iterator[tuple[int, int]]:
        a, size = 0, 0
        for b in range(len(self.pool)):
            size += int(self.plen[b])
            if size >= _CHUNK_CHARS:
                yield a, b + 1
                a, size = b + 1, 0
        if a < len(self.pool):
            yield a, len(self.pool)

    def _counts(self, strings: list[str]) -> sp.csr_matrix:
        """char_wb counts of lowercased ``strings`` (one row each) in the term table's
        ids, registering new terms; columns = the table's size after registration."""
        book = self.corpus.book
        assert book is not None and self.corpus.spec.char_range is not None
        if not book.covers(strings):
            raise ValueError("extra sections use characters absent from the corpus")
        lo, hi = self.corpus.spec.char_range
        parts = []
        a, size = 0, 0
        bounds = []
        for b, s in enumerate(strings):
            size += len(s)
            if size >= _CHUNK_CHARS:
                bounds.append((a, b + 1))
                a, size = b + 1, 0
        if a < len(strings) or not bounds:
            bounds.append((a, len(strings)))
        for a, b in bounds:
            ch = char_wb_chunk(strings[a:b], book, min_n=lo, max_n=hi)
            m = ch.counts.tocsr()
            col = self.table.lookup(ch.keys, add=True)
            parts.append((m.data, col[m.indices], m.indptr, m.shape[0]))
        n_cols = self.table.size
        out = sp.vstack(
            [sp.csr_matrix((d, i, p), shape=(r, n_cols)) for d, i, p, r in parts], format="csr"
        )
        out.sort_indices()
        return out

    # -- slots ----------------------------------------------------------------------------

    def plan(self, src: np.ndarray, length: np.ndarray, gend: np.ndarray) -> _Slot:
        """Per row: ``src`` pool entry (-1: none) and target ``length``."""
        has = src >= 0
        s = np.where(has, src, 0)
        plen = self.plen[s]
        m = np.where(has, length // plen, 0)
        r = np.where(has, length % plen, 0)
        hi = self.off[s + 1]
        key = self.base[s] + r
        c = np.searchsorted(gend, key, side="right")
        c = np.minimum(c, hi) - self.off[s]
        c = np.where(has, c, 0)
        return _Slot(np.where(has, src, -1), m, r, c, has & self.whole[s])

    def strings(self, slot: _Slot, wstart: np.ndarray) -> tuple[np.ndarray, list[str]]:
        """The rows' odd strings: whole slot texts, partial words, merged partial words."""
        from toolaudit.leakage._dilution import synthetic_text

        rows_out: list[int] = []
        out: list[str] = []
        for row in np.flatnonzero(slot.src >= 0).tolist():
            p = int(slot.src[row])
            text = self.pool[p]
            if slot.whole[row]:
                length = int(slot.m[row]) * int(self.plen[p]) + int(slot.r[row])
                rows_out.append(row)
                out.append(synthetic_text(text, length).lower())
                continue
            r = int(slot.r[row])
            c = int(slot.c[row])
            if r == 0 or c >= int(self.n_words[p]):
                continue
            begin = int(wstart[int(self.off[p]) + c])
            if begin >= r:
                continue
            partial = text[begin:r]
            if c == 0 and self.merge[p] and slot.m[row] >= 1:  # joins the last word before
                o1 = int(self.off[p + 1]) - 1
                # the last word's span: its start, and its end is the next whitespace
                last_begin = int(wstart[o1])
                last_end = last_begin + len(text[last_begin:].split(None, 1)[0])
                partial = text[last_begin:last_end] + partial
            rows_out.append(row)
            out.append(partial.lower())
        return np.asarray(rows_out, dtype=np.int64), out

    def word_bag(self, slot: _Slot, rows: np.ndarray, wid: np.ndarray) -> sp.coo_matrix:
        """(len(rows) x words) bag of the words counted through the word matrix: complete
        prefix words and the merge corrections (the m copies come from the pool counts)."""
        take = (slot.src[rows] >= 0) & ~slot.whole[rows]
        local = np.flatnonzero(take)
        p = slot.src[rows][local]
        m, r, c = slot.m[rows][local], slot.r[rows][local], slot.c[rows][local]
        merge = self.merge[p]
        parts_row, parts_col, parts_w = [], [], []

        def add(sel: np.ndarray, col: np.ndarray, weight: np.ndarray) -> None:
            parts_row.append(local[sel])
            parts_col.append(col)
            parts_w.append(weight)

        # copies fuse: -(m-1) first, -(m-1) last, +(m-1) junction
        sel = merge & (m >= 2)
        w = -(m[sel] - 1)
        add(sel, self.first[p[sel]], w)
        add(sel, self.last[p[sel]], w)
        add(sel, self.junction[p[sel]], -w)
        # the prefix: complete words; when it fuses with the copy before, that copy's
        # last word leaves, and a complete first word becomes the junction
        pre = r > 0
        fuse = pre & merge & (m >= 1)
        add(fuse, self.last[p[fuse]], -np.ones(int(fuse.sum()), np.int64))
        joined = fuse & (c >= 1)
        add(joined, self.junction[p[joined]], np.ones(int(joined.sum()), np.int64))
        skip = np.where(joined, 1, 0)
        starts = self.off[p] + skip
        stops = self.off[p] + np.where(pre, c, 0)
        lens = np.maximum(stops - starts, 0)
        flat = _ranges(starts, stops)
        parts_row.append(np.repeat(local, lens))
        parts_col.append(wid[flat])
        parts_w.append(np.ones(flat.size, np.int64))
        row_all = np.concatenate(parts_row)
        return sp.coo_matrix(
            (np.concatenate(parts_w), (row_all, np.concatenate(parts_col))),
            shape=(rows.size, self.store.shape("__syn_words")[0]),
        )

    def append(
        self,
        acc: str,
        slots: Sequence[tuple[np.ndarray, np.ndarray]],
        *,
        block_rows: int = APPEND_BLOCK_ROWS,
    ) -> None:
        """Add the slots ``(src, length)`` (arrays over every row) to the running sum
        stored under ``acc``, one row block at a time."""
        store = self.store
        wid = store.array("__syn_wid")
        wstart = store.array("__syn_wstart")
        gend = store.array("__syn_gend")
        plans = [self.plan(src, length, gend) for src, length in slots]
        del gend
        n = self.corpus.n_rows
        # the odd strings first: they may add terms, and the width must be known
        odd: sp.csr_matrix | None = None
        n_odd = odd_chars = 0
        for plan in plans:
            rows, texts = self.strings(plan, wstart)
            n_odd += len(texts)
            odd_chars += sum(len(t) for t in texts)
            if not texts:
                continue
            counts = self._counts(texts)
            assign = sp.csr_matrix(
                (np.ones(rows.size, np.int32), (rows, np.arange(rows.size))), shape=(n, rows.size)
            )
            piece = assign @ counts
            odd = piece if odd is None else _widen(odd, piece.shape[1]) + piece
            del counts, assign, piece
        del wstart
        logger.debug(
            "synthetic slots: %d characters of slot text, %d odd strings of %d characters "
            "tokenized",
            int(sum(length.sum() for _, length in slots)),
            n_odd,
            odd_chars,
        )
        n_cols = self.table.size
        words = _widen(store["__syn_words"], n_cols)

        def blocks() -> Iterator[sp.csr_matrix]:
            for a in range(0, n, block_rows):
                rows = np.arange(a, min(a + block_rows, n), dtype=np.int64)
                pieces = [_widen(store.rows(acc, rows), n_cols)]
                bags = []
                for plan in plans:
                    pieces.append(self._copies(plan, rows, n_cols))
                    bags.append(self.word_bag(plan, rows, wid))
                if bags:
                    pieces.append(_summed(bags, (rows.size, words.shape[0])) @ words)
                if odd is not None:
                    pieces.append(_widen(odd[rows], n_cols))
                out = _summed(pieces, (rows.size, n_cols))
                yield out.astype(np.int32)

        store.write_rows(acc, blocks(), n_cols=n_cols)

    def _copies(self, plan: _Slot, rows: np.ndarray, n_cols: int) -> sp.csr_matrix:
        """``m`` times the stored counts of each row's source (zero rows elsewhere)."""
        src, m = plan.src[rows], plan.m[rows]
        local = np.flatnonzero((src >= 0) & (m >= 1) & ~plan.whole[rows])
        got = self.store.rows("__syn_pool", src[local])
        lens = np.diff(got.indptr)
        vals = got.data.astype(np.int64) * np.repeat(m[local], lens)
        per_row = np.zeros(rows.size, dtype=np.int64)
        per_row[local] = lens
        ptr = np.concatenate([[0], np.cumsum(per_row)])
        return sp.csr_matrix((vals, got.indices, ptr), shape=(rows.size, n_cols))

    def close(self) -> None:
        """Delete the pool's files from the store."""
        for name in ("__syn_pool", "__syn_words"):
            self.store.pop(name)
        for name in ("wid", "wstart", "gend"):
            self.store.drop_array(f"__syn_{name}")

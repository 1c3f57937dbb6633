"""Synthetic dilution slots as word recipes, never as text (char_wb).

A synthetic slot is a pool section ``S`` repeated or clipped to a target length ``L``:
``S * m + S[:r]`` with ``m = L // len(S)`` and ``r = L % len(S)``. char_wb n-grams are
extracted from each whitespace-delimited word on its own, so a text's counts are the
sum of its words' counts (``_words``). The words of ``S * m + S[:r]`` are the words of
``S`` (m times), the complete words of the prefix ``S[:r]``, and a few strings made where
the pieces touch:

* where one copy of ``S`` ends and the next begins without whitespace, the last word of
  ``S`` and its first word become one word (the *junction*);
* the prefix may end inside a word (the *partial* word), and when ``S`` neither starts
  nor ends with whitespace, the prefix's first word joins the last word of the copy
  before it.

So a slot is, per row: the pool section's bag of words times ``m``, a range of its word
sequence (the prefix's complete words), and a few correction words with weights +-1 or
+-(m-1) (junctions, partial words), which are the only strings ever tokenized (they join
the corpus's words). The kernels (``_kernels``) expand the recipe word by word.

The counts are exactly the tokenized slot's (``tests/leakage/test_synthetic.py`` checks
them against ``slot_texts`` joined to the carrier and vectorized by scikit-learn on
adversarial text). Sections that contain no whitespace at all (the copies fuse into one
word), and any section whose lowercased form splits differently, are split as whole
slot text instead.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from toolaudit.leakage._ngrams import _whitespace_table
from toolaudit.leakage._words import WordCorpus

logger = logging.getLogger(__name__)

#: Characters per whitespace scan when the pool's word spans are found.
_CHUNK_CHARS = 2_000_000


def synthetic_text(source: str, length: int) -> str:
    """``source`` repeated or clipped to ``length`` characters."""
    if not source or length <= 0:
        return ""
    reps = -(-length // len(source))
    return (source * reps)[:length]


@dataclass(slots=True)
class _Slot:
    """One slot's plan for every row: source, repeat count, remainder and prefix words."""

    src: np.ndarray  # pool entry per row, -1 where no stream drew the row
    m: np.ndarray
    r: np.ndarray
    c: np.ndarray  # complete words of the prefix S[:r]
    whole: np.ndarray  # rows whose slot is split as text (see module docstring)


@dataclass(frozen=True, slots=True)
class SlotRecipes:
    """Every row's slots as the kernels read them (``_kernels.Recipe``'s slot and pool
    arrays): ``(n_rows, k_max)`` source, weight and prefix range, explicit words per
    ``row * k_max + slot`` cell, and the pool's bags and word sequence."""

    slots: tuple[np.ndarray, ...]
    pool: tuple[np.ndarray, ...]
    n_odd: int
    odd_chars: int


class SlotPlanner:
    """The pool's sections in word space, and the recipes of synthetic slots over them.

    ``pool_index`` names, for each tool, the rows whose sections form the pool, in pool
    order (the audit's pool is every non-empty section of the pool tools on the audited
    rows).
    """

    def __init__(
        self,
        corpus: WordCorpus,
        pool: Sequence[str],
        pool_index: Sequence[tuple[str, np.ndarray]],
    ) -> None:
        self.corpus = corpus
        self.pool = pool
        n_pool = len(pool)
        self.plen = np.fromiter((len(s) for s in pool), dtype=np.int64, count=n_pool)
        bags, seqs, n_words = [], [], []
        for name, rows in pool_index:
            bag, seq, ptr = corpus.bags[name], corpus.seq[name], corpus.ptr[name]
            bags.append(bag[rows])
            lens = ptr[rows + 1] - ptr[rows]
            flat = _ranges(ptr[rows], ptr[rows + 1])
            seqs.append(seq[flat])
            n_words.append(lens)
        n_cols = corpus.n_words
        stacked = (
            sp.vstack([sp.csr_matrix(b, shape=(b.shape[0], n_cols)) for b in bags], format="csr")
            if bags
            else sp.csr_matrix((0, n_cols), dtype=np.int32)
        )
        stacked.sort_indices()
        self.bag = stacked
        self.seq = np.concatenate(seqs).astype(np.int32) if seqs else np.empty(0, np.int32)
        self.n_words = np.concatenate(n_words) if n_words else np.empty(0, np.int64)
        self.off = np.concatenate([[0], np.cumsum(self.n_words)]).astype(np.int64)
        self._spans()

    def _spans(self) -> None:
        """Word spans in original coordinates, junction words and the entries' flags."""
        table = _whitespace_table()
        n_pool = len(self.pool)
        lead = np.zeros(n_pool, dtype=bool)
        trail = np.zeros(n_pool, dtype=bool)
        regular = np.ones(n_pool, dtype=bool)
        # positions inside a section (int32); ``gend`` below is global
        self.wstart = np.zeros(self.seq.size, dtype=np.int32)
        self.wend = np.zeros(self.seq.size, dtype=np.int32)
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
            # lowercasing changed the split: the entry's slots are split as whole text
            regular[a:b] = counts == self.n_words[a:b]
            keep = regular[a + owner]
            flat = self.off[a + owner[keep]] + _rank_within(owner[keep])
            self.wstart[flat] = begin[keep] - offs[owner[keep]]
            self.wend[flat] = end[keep] - offs[owner[keep]]
            for i, text in enumerate(texts):
                if text:
                    lead[a + i] = text[0].isspace()
                    trail[a + i] = text[-1].isspace()
        has = self.n_words > 0
        self.first = np.full(n_pool, -1, dtype=np.int64)
        self.last = np.full(n_pool, -1, dtype=np.int64)
        self.first[has] = self.seq[self.off[:-1][has]]
        self.last[has] = self.seq[self.off[1:][has] - 1]
        # copies of S fuse at their ends when S neither starts nor ends with whitespace
        self.merge = has & ~lead & ~trail
        # no whitespace at all: every copy is one word, so the slot is one new word
        self.whole = ~regular | (self.merge & (self.n_words == 1))
        self.junction = np.full(n_pool, -1, dtype=np.int64)
        fused = np.flatnonzero(self.merge & ~self.whole)
        words = []
        for p in fused.tolist():
            o0, o1 = int(self.off[p]), int(self.off[p + 1]) - 1
            s = self.pool[p]
            words.append(
                (s[self.wstart[o1] : self.wend[o1]] + s[self.wstart[o0] : self.wend[o0]]).lower()
            )
        if words:
            self.junction[fused] = self.corpus.word_ids(words)
        # key that grows along the flat word arrays: entry base + end offset
        self.base = np.concatenate([[0], np.cumsum(self.plen + 1)])[:-1]
        wide = self.base[-1] + int(self.plen.max()) >= 2**31 if n_pool else False
        key_type = np.int64 if wide else np.int32
        owner_flat = np.repeat(np.arange(n_pool, dtype=np.int32), self.n_words)
        self.gend = self.base.astype(key_type)[owner_flat] + self.wend.astype(key_type)
        del owner_flat
        logger.debug(
            "synthetic pool: %d sections, %d words, %d split whole",
            n_pool,
            int(self.seq.size),
            int(self.whole.sum()),
        )

    def _chunks(self) -> list[tuple[int, int]]:
        out = []
        a, size = 0, 0
        for b in range(len(self.pool)):
            size += int(self.plen[b])
            if size >= _CHUNK_CHARS:
                out.append((a, b + 1))
                a, size = b + 1, 0
        if a < len(self.pool):
            out.append((a, len(self.pool)))
        return out

    # -- slots ----------------------------------------------------------------------------

    def plan(self, src: np.ndarray, length: np.ndarray) -> _Slot:
        """Per row: ``src`` pool entry (-1: none) and target ``length``."""
        has = src >= 0
        s = np.where(has, src, 0)
        plen = np.maximum(self.plen[s], 1)
        m = np.where(has, length // plen, 0)
        r = np.where(has, length % plen, 0)
        hi = self.off[s + 1]
        key = (self.base[s] + r).astype(self.gend.dtype)
        c = np.searchsorted(self.gend, key, side="right")
        c = np.minimum(np.maximum(c, self.off[s]), hi) - self.off[s]
        c = np.where(has, c, 0)
        return _Slot(np.where(has, src, -1), m, r, c, has & self.whole[s])

    def _odd(self, slot: _Slot) -> tuple[list[int], list[str], list[int], list[list[str]]]:
        """Rows with a partial (or fused partial) word and those words; rows split as
        whole text and their words."""

        rows_p: list[int] = []
        partial: list[str] = []
        rows_w: list[int] = []
        whole: list[list[str]] = []
        for row in np.flatnonzero(slot.src >= 0).tolist():
            p = int(slot.src[row])
            text = self.pool[p]
            if slot.whole[row]:
                length = int(slot.m[row]) * int(self.plen[p]) + int(slot.r[row])
                rows_w.append(row)
                whole.append(synthetic_text(text, length).lower().split())
                continue
            r = int(slot.r[row])
            c = int(slot.c[row])
            if r == 0 or c >= int(self.n_words[p]):
                continue
            begin = int(self.wstart[int(self.off[p]) + c])
            if begin >= r:
                continue
            word = text[begin:r]
            if c == 0 and self.merge[p] and slot.m[row] >= 1:  # joins the last word before
                o1 = int(self.off[p + 1]) - 1
                word = text[int(self.wstart[o1]) : int(self.wend[o1])] + word
            rows_p.append(row)
            partial.append(word.lower())
        return rows_p, partial, rows_w, whole

    def recipes(self, slots: Sequence[tuple[np.ndarray, np.ndarray]]) -> SlotRecipes:
        """The recipes of ``slots`` (each a ``(src, length)`` pair of arrays over every
        row, as ``_dilution._slot_arrays`` gives them)."""
        n = self.corpus.n_rows
        k_max = len(slots)
        s_p = np.full((n, k_max), -1, dtype=np.int32)
        s_m = np.zeros((n, k_max), dtype=np.int32)
        s_a = np.zeros((n, k_max), dtype=np.int64)
        s_b = np.zeros((n, k_max), dtype=np.int64)
        cells, words, weights = [], [], []
        odd_rows: list[np.ndarray] = []
        odd_strings: list[str] = []
        n_odd = odd_chars = 0

        def add(j: int, rows: np.ndarray, w: np.ndarray, wt: np.ndarray) -> None:
            if rows.size:
                cells.append(rows.astype(np.int64) * k_max + j)
                words.append(np.asarray(w, dtype=np.int64))
                weights.append(np.asarray(wt, dtype=np.int64))

        for j, (src, length) in enumerate(slots):
            plan = self.plan(np.asarray(src), np.asarray(length))
            take = (plan.src >= 0) & ~plan.whole
            rows = np.flatnonzero(take)
            p = plan.src[rows]
            m, r, c = plan.m[rows], plan.r[rows], plan.c[rows]
            s_p[rows, j] = p
            s_m[rows, j] = m
            merge = self.merge[p]
            # copies fuse: -(m-1) first, -(m-1) last, +(m-1) junction
            sel = merge & (m >= 2)
            add(j, rows[sel], self.first[p[sel]], -(m[sel] - 1))
            add(j, rows[sel], self.last[p[sel]], -(m[sel] - 1))
            add(j, rows[sel], self.junction[p[sel]], m[sel] - 1)
            # the prefix: complete words; when it fuses with the copy before, that copy's
            # last word leaves, and a complete first word becomes the junction
            pre = r > 0
            fuse = pre & merge & (m >= 1)
            add(j, rows[fuse], self.last[p[fuse]], -np.ones(int(fuse.sum()), np.int64))
            joined = fuse & (c >= 1)
            add(j, rows[joined], self.junction[p[joined]], np.ones(int(joined.sum()), np.int64))
            skip = np.where(joined, 1, 0)
            s_a[rows, j] = self.off[p] + skip
            s_b[rows, j] = np.maximum(self.off[p] + np.where(pre, c, 0), self.off[p] + skip)
            rows_p, partial, rows_w, whole = self._odd(plan)
            n_odd += len(partial) + len(whole)
            odd_chars += sum(len(t) for t in partial) + sum(len(w) for ws in whole for w in ws)
            odd_rows.append(np.asarray(rows_p, dtype=np.int64) * k_max + j)
            odd_strings.extend(partial)
            for row, ws in zip(rows_w, whole, strict=True):
                uniq, counts = np.unique(self.corpus.word_ids(ws), return_counts=True)
                cells.append(np.full(uniq.size, row * k_max + j, dtype=np.int64))
                words.append(uniq.astype(np.int64))
                weights.append(counts.astype(np.int64))
        if odd_strings:  # one registration: new words' n-grams are counted once
            cells.append(np.concatenate(odd_rows))
            words.append(self.corpus.word_ids(odd_strings).astype(np.int64))
            weights.append(np.ones(len(odd_strings), np.int64))
        cell = np.concatenate(cells) if cells else np.empty(0, np.int64)
        order = np.argsort(cell, kind="stable")
        x_ptr = np.zeros(n * k_max + 1, dtype=np.int64)
        np.cumsum(np.bincount(cell, minlength=n * k_max), out=x_ptr[1:])
        x_w = (np.concatenate(words) if words else np.empty(0, np.int64))[order]
        x_c = (np.concatenate(weights) if weights else np.empty(0, np.int64))[order]
        logger.debug(
            "synthetic slots: %d characters of slot text, %d odd strings of %d characters "
            "tokenized",
            int(sum(int(np.asarray(length).sum()) for _, length in slots)),
            n_odd,
            odd_chars,
        )
        bag = self.bag
        pool = (bag.indptr, bag.indices, bag.data, self.seq)
        return SlotRecipes(
            (s_p, s_m, s_a, s_b, x_ptr, x_w.astype(np.int32), x_c.astype(np.int32)),
            pool,
            n_odd,
            odd_chars,
        )


def _ranges(starts: np.ndarray, stops: np.ndarray) -> np.ndarray:
    """Concatenation of ``arange(a, b)`` for each pair (empty where ``b <= a``)."""
    lens = np.maximum(stops - starts, 0)
    total = int(lens.sum())
    if total == 0:
        return np.empty(0, dtype=np.int64)
    first = np.cumsum(lens) - lens
    return np.repeat(starts - first, lens) + np.arange(total, dtype=np.int64)


def _rank_within(owner: np.ndarray) -> np.ndarray:
    """For a sorted array of owners, each element's position within its owner's run."""
    if owner.size == 0:
        return owner.astype(np.int64)
    idx = np.arange(owner.size, dtype=np.int64)
    start = np.ones(owner.size, dtype=bool)
    start[1:] = owner[1:] != owner[:-1]
    first = np.maximum.accumulate(np.where(start, idx, 0))
    return idx - first

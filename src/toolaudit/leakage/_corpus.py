"""Per-section n-gram counts, tokenized once, from which every scope is composed.

A scope (the full trace, one tool, a tool subset, a dilution point) is a list of
sections joined with ``"\\n"``. Because ``"\\n"`` is whitespace and never part of a
``\\w`` token, the counts of the joined text are the sum of the sections' counts, plus,
for word bigrams only, one bigram per boundary: the last token of the previous section
that has tokens followed by the first token of the next one. ``SectionCorpus`` stores a
count matrix per (analyzer, section name) and adds those boundary bigrams explicitly.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from toolaudit.leakage._ngrams import (
    CharCodebook,
    ChunkCounts,
    TokenRegistry,
    bigram_keys,
    char_wb_chunk,
    merge_chunks,
    word_chunk,
)
from toolaudit.leakage._store import SectionStore

logger = logging.getLogger(__name__)

Analyzer = str  # "word" or "char_wb"
ProgressFn = Callable[[int, int, str], None]

#: Rows per block when the synthetic sweep appends a slot to its running sum on disk.
APPEND_BLOCK_ROWS = 1024


class TermTable:
    """Integer term keys with dense ids; extendable (boundary bigrams, synthetic text)."""

    def __init__(self, keys: np.ndarray) -> None:
        self.keys = np.asarray(keys, dtype=np.int64)
        self._reindex()

    def _reindex(self) -> None:
        self._order = np.argsort(self.keys, kind="stable")
        self._sorted = self.keys[self._order]

    @property
    def size(self) -> int:
        """Number of terms."""
        return int(self.keys.size)

    def lookup(self, keys: np.ndarray, *, add: bool = False) -> np.ndarray:
        """Ids of ``keys`` (-1 when unknown, unless ``add`` registers them)."""
        keys = np.asarray(keys, dtype=np.int64)
        ids = np.full(keys.size, -1, dtype=np.int64)
        if self.size:
            pos = np.minimum(np.searchsorted(self._sorted, keys), self.size - 1)
            found = self._sorted[pos] == keys
            ids[found] = self._order[pos[found]]
        missing = ids < 0
        if add and missing.any():
            new = np.unique(keys[missing])
            start = self.size
            self.keys = np.concatenate([self.keys, new])
            self._reindex()
            ids[missing] = start + np.searchsorted(new, keys[missing])
        return ids


def _widen(mat: sp.csr_matrix, n_cols: int) -> sp.csr_matrix:
    if mat.shape[1] == n_cols:
        return mat
    return sp.csr_matrix((mat.data, mat.indices, mat.indptr), shape=(mat.shape[0], n_cols))


@dataclass(frozen=True, slots=True)
class CorpusSpec:
    """Which n-grams to extract: word n-grams up to ``word_max_n`` (0 = none) and char_wb
    n-grams of ``char_range`` (None = none)."""

    word_max_n: int = 2
    char_range: tuple[int, int] | None = (2, 5)
    chunk_chars: int = 2_000_000


class SectionCorpus:
    """Count matrices per analyzer and section name (rows = examples, in order).

    >>> corpus = SectionCorpus({"a": ["Hello world"], "b": ["again"]}, CorpusSpec())
    >>> corpus.term_strings("word", corpus.scope_counts("word", ["a", "b"]).indices)
    ['hello', 'world', 'again', 'hello world', 'world again']
    """

    def __init__(
        self,
        sections: dict[str, list[str]],
        spec: CorpusSpec,
        *,
        progress: ProgressFn | None = None,
    ) -> None:
        self.spec = spec
        self.n_rows = len(next(iter(sections.values()))) if sections else 0
        self.registry = TokenRegistry()
        # on disk, read one section at a time: held in memory at the seed's size they
        # took ~2 GB next to the largest design matrix
        self.mats: dict[Analyzer, SectionStore] = {
            "word": SectionStore(),
            "char_wb": SectionStore(),
        }
        self.first: dict[str, np.ndarray] = {}
        self.last: dict[str, np.ndarray] = {}
        self.tables: dict[Analyzer, TermTable] = {}
        self.book: CharCodebook | None = None
        if spec.char_range is not None:
            present = None
            for texts in sections.values():
                for chunk in self._chunks(texts):
                    present = CharCodebook.scan(chunk, present)
            if present is None:
                present = np.zeros(0x110000, dtype=bool)
            self.book = CharCodebook(present, max_n=spec.char_range[1])
        # each section's chunk counts and keys go to disk as soon as it is tokenized;
        # memory keeps the running union of the keys (the term table to be), and the
        # chunks are remapped onto it one section at a time
        pending: dict[Analyzer, dict[str, int]] = {"word": {}, "char_wb": {}}
        union: dict[Analyzer, np.ndarray] = {
            "word": np.empty(0, np.int64),
            "char_wb": np.empty(0, np.int64),
        }
        total = len(sections)
        for done, (name, texts) in enumerate(sections.items()):
            if len(texts) != self.n_rows:
                raise ValueError(f"section {name!r} has {len(texts)} rows, not {self.n_rows}")
            words, chars = self._extract(name, texts)
            for analyzer, chunks in (("word", words), ("char_wb", chars)):
                pending[analyzer][name] = len(chunks)
                store = self.mats[analyzer]
                for i, c in enumerate(chunks):
                    store[f"__chunk{i}:{name}"] = c.counts
                    store.put_array(f"__keys{i}:{name}", c.keys)
                if chunks:
                    union[analyzer] = np.union1d(
                        union[analyzer], np.unique(np.concatenate([c.keys for c in chunks]))
                    )
            del words, chars
            if progress is not None:
                progress(done + 1, total, f"tokenized {name}")
        if spec.word_max_n:
            self._install("word", pending["word"], union.pop("word"))
        if spec.char_range is not None:
            self._install("char_wb", pending["char_wb"], union.pop("char_wb"))

    def _chunks(self, texts: list[str]) -> list[list[str]]:
        out: list[list[str]] = []
        cur: list[str] = []
        size = 0
        for text in texts:
            cur.append(text.lower())
            size += len(text)
            if size >= self.spec.chunk_chars:
                out.append(cur)
                cur, size = [], 0
        if cur or not out:
            out.append(cur)
        return out

    def _extract(
        self, name: str, texts: list[str], analyzers: Sequence[Analyzer] = ("word", "char_wb")
    ) -> tuple[list[ChunkCounts], list[ChunkCounts]]:
        words: list[ChunkCounts] = []
        chars: list[ChunkCounts] = []
        firsts, lasts = [], []
        for chunk in self._chunks(texts):
            if self.spec.word_max_n and "word" in analyzers:
                wc = word_chunk(chunk, self.registry, max_n=self.spec.word_max_n)
                words.append(wc.counts)
                firsts.append(wc.first)
                lasts.append(wc.last)
            if (
                self.book is not None
                and self.spec.char_range is not None
                and "char_wb" in analyzers
            ):
                lo, hi = self.spec.char_range
                chars.append(char_wb_chunk(chunk, self.book, min_n=lo, max_n=hi))
        if firsts:
            self.first[name] = np.concatenate(firsts)
            self.last[name] = np.concatenate(lasts)
        return words, chars

    def _install(self, analyzer: Analyzer, pending: dict[str, int], keys: np.ndarray) -> None:
        self.tables[analyzer] = TermTable(keys)
        store = self.mats[analyzer]
        for name, n_chunks in pending.items():  # one section's chunks in memory at a time
            chunks = []
            for i in range(n_chunks):
                chunk_keys = store.pop_array(f"__keys{i}:{name}")
                chunks.append(ChunkCounts(chunk_keys, store[f"__chunk{i}:{name}"]))
                store.pop(f"__chunk{i}:{name}")
            store[name] = merge_chunks(chunks, keys)
            del chunks

    @property
    def section_names(self) -> list[str]:
        """Names of the stored sections, in insertion order."""
        return list(self.mats["char_wb"] if len(self.mats["char_wb"]) else self.mats["word"])

    def add_sections(
        self,
        sections: dict[str, list[str]],
        *,
        analyzers: Sequence[Analyzer] = ("word", "char_wb"),
    ) -> None:
        """Tokenize extra sections (e.g. synthetic dilution text) into the same tables
        (only for ``analyzers``: a sweep on one feature set needs one)."""
        book = self.book
        if book is not None and not all(
            book.covers([t.lower() for t in texts]) for texts in sections.values()
        ):
            raise ValueError("extra sections use characters absent from the corpus")
        for name, texts in sections.items():
            words, chars = self._extract(name, texts, analyzers)
            for analyzer, lst in (("word", words), ("char_wb", chars)):
                if analyzer not in self.tables or analyzer not in analyzers:
                    continue
                table = self.tables[analyzer]
                mats = []
                for ch in lst:
                    m = ch.counts.tocsr()
                    col = table.lookup(ch.keys, add=True)
                    mats.append((m.data, col[m.indices], m.indptr, m.shape[0]))
                out = sp.vstack(
                    [sp.csr_matrix((d, i, p), shape=(r, table.size)) for d, i, p, r in mats],
                    format="csr",
                )
                out.sort_indices()
                self.mats[analyzer][name] = out

    def drop_sections(self, names: Sequence[str]) -> None:
        """Forget sections added with ``add_sections`` (their terms stay in the tables)."""
        for name in names:
            for mats in self.mats.values():
                mats.pop(name, None)
            self.first.pop(name, None)
            self.last.pop(name, None)

    def scope_counts(
        self, analyzer: Analyzer, names: Sequence[str], rows: np.ndarray | None = None
    ) -> sp.csr_matrix:
        """Counts of the sections ``names`` joined with newlines, for every row (or for
        ``rows`` only: then only those rows' slices are summed, never the whole scope)."""
        extra = None
        if analyzer == "word" and self.spec.word_max_n >= 2 and len(names) > 1:
            extra = self._boundary_bigrams(names)  # may grow the table: first
        n_cols = self.tables[analyzer].size
        n_out = self.n_rows if rows is None else int(np.asarray(rows).size)
        store = self.mats[analyzer]

        def part(m: sp.csr_matrix) -> sp.csr_matrix:
            return _widen(m if rows is None else m[rows], n_cols)

        # one section is read from the store at a time (only ``rows``) onto a running sum
        total: sp.csr_matrix | None = None
        for name in names:
            piece = _widen(store[name] if rows is None else store.rows(name, rows), n_cols)
            total = piece if total is None else total + piece
            del piece
        if extra is not None:
            piece = part(extra)
            total = piece if total is None else total + piece
            del piece, extra
        if total is None:
            return sp.csr_matrix((n_out, n_cols), dtype=np.int32)
        total = sp.csr_matrix(total)
        total.sort_indices()
        return total

    def last_tokens(self, names: Sequence[str]) -> np.ndarray:
        """Per row, the last word token id of the sections ``names`` joined (-1: none)."""
        prev = np.full(self.n_rows, -1, dtype=np.int64)
        for name in names:
            last = self.last[name]
            prev = np.where(last >= 0, last, prev)
        return prev

    def append_section(
        self, analyzer: Analyzer, acc: sp.csr_matrix, prev: np.ndarray | None, name: str
    ) -> tuple[sp.csr_matrix, np.ndarray | None]:
        """Counts of a scope with section ``name`` appended to it: ``acc`` plus the
        section's counts (plus, for words, the bigram across the boundary); ``prev`` is
        each row's last word token so far. Returns the new counts and ``prev``.

        The whole-matrix form: the old and new sums coexist in memory. The synthetic
        sweep uses ``append_section_blocks``; this one is the reference it is tested
        and benchmarked against."""
        table = self.tables[analyzer]
        total = _widen(acc, table.size) + _widen(self.mats[analyzer][name], table.size)
        if analyzer == "word" and prev is not None:
            first, last = self.first[name], self.last[name]
            if self.spec.word_max_n >= 2:
                pair = (first >= 0) & (prev >= 0)
                row = np.flatnonzero(pair)
                ids = table.lookup(bigram_keys(prev[pair], first[pair]), add=True)
                shape = (self.n_rows, table.size)
                extra = sp.coo_matrix(
                    (np.ones(row.size, dtype=np.int32), (row, ids)), shape=shape
                ).tocsr()
                total = _widen(total, table.size) + extra
            prev = np.where(last >= 0, last, prev)
        total = sp.csr_matrix(total)
        total.sort_indices()
        return total, prev

    def copy_section(
        self, analyzer: Analyzer, name: str, out: str, *, block_rows: int = APPEND_BLOCK_ROWS
    ) -> None:
        """Store a copy of section ``name``'s counts under ``out`` (widened to the term
        table), one row block at a time: the start of a running sum."""
        store = self.mats[analyzer]
        n_cols = self.tables[analyzer].size
        store.write_rows(
            out,
            (
                store.rows(name, np.arange(a, min(a + block_rows, self.n_rows), dtype=np.int64))
                for a in range(0, self.n_rows, block_rows)
            ),
            n_cols=n_cols,
        )

    def append_section_blocks(
        self,
        analyzer: Analyzer,
        acc: str,
        prev: np.ndarray | None,
        name: str,
        *,
        block_rows: int = APPEND_BLOCK_ROWS,
    ) -> np.ndarray | None:
        """``append_section`` on a running sum kept in the store under ``acc``: the sum
        is replaced by itself plus section ``name`` (plus, for words, the bigrams across
        the boundary), one block of ``block_rows`` rows at a time, so memory holds one
        block of the old sum, of the section and of the new sum, never a whole matrix.
        Returns the new ``prev``. The stored result equals ``append_section``'s exactly
        (the boundary bigrams' term ids are assigned for every row at once, as there)."""
        store = self.mats[analyzer]
        table = self.tables[analyzer]
        row = ids = None
        if analyzer == "word" and prev is not None:
            first, last = self.first[name], self.last[name]
            if self.spec.word_max_n >= 2:
                pair = (first >= 0) & (prev >= 0)
                row = np.flatnonzero(pair)
                ids = table.lookup(bigram_keys(prev[pair], first[pair]), add=True)
            prev = np.where(last >= 0, last, prev)
        n_cols = table.size

        def blocks() -> Iterator[sp.csr_matrix]:
            for start in range(0, self.n_rows, block_rows):
                stop = min(start + block_rows, self.n_rows)
                idx = np.arange(start, stop, dtype=np.int64)
                total = _widen(store.rows(acc, idx), n_cols) + _widen(store.rows(name, idx), n_cols)
                if row is not None and ids is not None:
                    lo, hi = np.searchsorted(row, [start, stop])
                    extra = sp.coo_matrix(
                        (np.ones(hi - lo, dtype=np.int32), (row[lo:hi] - start, ids[lo:hi])),
                        shape=(stop - start, n_cols),
                    ).tocsr()
                    total = total + extra
                    del extra
                total = sp.csr_matrix(total)
                total.sort_indices()
                yield total
                del total

        store.write_rows(acc, blocks(), n_cols=n_cols)
        return prev

    def _boundary_bigrams(self, names: Sequence[str]) -> sp.csr_matrix:
        prev = np.full(self.n_rows, -1, dtype=np.int64)
        rows, keys = [], []
        for name in names:
            first, last = self.first[name], self.last[name]
            has = first >= 0
            pair = has & (prev >= 0)
            rows.append(np.flatnonzero(pair))
            keys.append(bigram_keys(prev[pair], first[pair]))
            prev = np.where(has, last, prev)
        row = np.concatenate(rows)
        ids = self.tables["word"].lookup(np.concatenate(keys), add=True)
        shape = (self.n_rows, self.tables["word"].size)
        return sp.coo_matrix((np.ones(row.size, dtype=np.int32), (row, ids)), shape=shape).tocsr()

    def term_strings(self, analyzer: Analyzer, ids: np.ndarray) -> list[str]:
        """The strings of term ids."""
        keys = self.tables[analyzer].keys[np.asarray(ids, dtype=np.int64)]
        if analyzer == "char_wb":
            assert self.book is not None
            return self.book.decode(keys)
        return [self.registry.term(int(k)) for k in keys]

    def string_order(self, analyzer: Analyzer, ids: np.ndarray) -> np.ndarray:
        """``ids`` sorted by their term strings (Python's code-point order)."""
        ids = np.asarray(ids, dtype=np.int64)
        if analyzer == "char_wb":  # packed keys sort like strings
            return ids[np.argsort(self.tables[analyzer].keys[ids], kind="stable")]
        strings = self.term_strings(analyzer, ids)
        order = sorted(range(len(strings)), key=strings.__getitem__)
        return ids[np.asarray(order, dtype=np.int64)]

    def term_lengths(self, analyzer: Analyzer) -> np.ndarray | None:
        """Characters per term (char_wb only), indexed by term id."""
        if analyzer != "char_wb" or self.book is None:
            return None
        return self.book.lengths(self.tables[analyzer].keys)

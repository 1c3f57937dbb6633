"""The corpus in word space: each section as a sequence of word ids, each distinct word's
n-gram counts once.

scikit-learn's ``char_wb`` analyzer lowercases a document, splits it on whitespace and
cuts every word, padded with one space on each side, into character n-grams: a
document's counts are the sum, over its words, of each word's counts. Its ``word``
analyzer (``(?u)\\b\\w\\w+\\b`` on the lowercased document) never matches whitespace, so a
document's tokens are its whitespace words' tokens in order; its bigrams are each
word's internal bigrams plus one bigram between consecutive words that have tokens (the
last token of one, the first of the next). A scope joins its sections with ``"\\n"``,
which is whitespace, so its counts are the sections' counts plus, for word bigrams, one
bigram across each boundary between sections that have tokens.

``WordCorpus`` therefore tokenizes only the distinct words (about 620,000 words of 10M
characters for the 234M characters of the controlled benchmark at the seed's size) and
keeps, per section, the rows' word sequences (to form bags, cross-word bigrams and the
dilution sweep's prefixes) and bags (distinct words with counts per row). Every design
is composed from these by the kernels in ``_kernels``.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from toolaudit.leakage._ngrams import (
    TOKEN_RE,
    CharCodebook,
    ChunkCounts,
    TokenRegistry,
    _count,
    bigram_keys,
    char_wb_chunk,
)
from toolaudit.progress import Progress

logger = logging.getLogger(__name__)

Analyzer = str  # "word" or "char_wb"

_ROW_SHIFT = np.int64(32)


@dataclass(frozen=True, slots=True)
class CorpusSpec:
    """Which n-grams to extract: word n-grams up to ``word_max_n`` (0 = none) and char_wb
    n-grams of ``char_range`` (None = none)."""

    word_max_n: int = 2
    char_range: tuple[int, int] | None = (2, 5)
    chunk_chars: int = 2_000_000


class TermTable:
    """Integer term keys with dense ids; extendable (boundary bigrams, synthetic words)."""

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


def csr(ptr: np.ndarray, idx: np.ndarray, val: np.ndarray, n_cols: int) -> sp.csr_matrix:
    """A CSR matrix over existing arrays (sorted indices assumed)."""
    mat = sp.csr_matrix((val, idx, ptr), shape=(int(ptr.size - 1), int(n_cols)))
    mat.has_sorted_indices = True
    return mat


def csr_arrays(mat: sp.csr_matrix) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A count matrix's arrays in the kernels' types (int64 pointers, int32 indices and
    counts; scipy may have narrowed the pointers)."""
    return (
        np.ascontiguousarray(mat.indptr, dtype=np.int64),
        np.ascontiguousarray(mat.indices, dtype=np.int32),
        np.ascontiguousarray(mat.data, dtype=np.int32),
    )


def _counts_csr(doc: np.ndarray, keys: np.ndarray, n_docs: int, table: TermTable) -> sp.csr_matrix:
    """docs x term ids count matrix of (doc, key) pairs (keys registered in ``table``):
    one sort of ``doc << 32 | id``."""
    from toolaudit.leakage._kernels import bag_rows

    ids = table.lookup(keys, add=True) if keys.size else np.empty(0, np.int64)
    packed = np.sort((np.asarray(doc, dtype=np.int64) << _ROW_SHIFT) | ids)
    ptr, idx, val = bag_rows(packed, n_docs, _ROW_SHIFT)
    return csr(ptr, idx, val, table.size)


class WordCorpus:
    """Word sequences and bags per section, and each distinct word's n-gram counts.

    >>> corpus = WordCorpus({"a": ["Hello world"], "b": ["again"]}, CorpusSpec())
    >>> corpus.word_list
    ['hello', 'world', 'again']
    >>> sorted(corpus.term_strings("word", np.arange(corpus.tables["word"].size)))
    ['again', 'hello', 'hello world', 'world']
    """

    def __init__(
        self,
        sections: dict[str, list[str]],
        spec: CorpusSpec,
        *,
        progress: Progress | None = None,
    ) -> None:
        self.spec = spec
        self.n_rows = len(next(iter(sections.values()))) if sections else 0
        ids: defaultdict[str, int] = defaultdict()
        ids.default_factory = ids.__len__  # a new word gets the next id
        self._ids = ids
        self.word_list: list[str] = []
        self.seq: dict[str, np.ndarray] = {}
        self.ptr: dict[str, np.ndarray] = {}
        self.bags: dict[str, sp.csr_matrix] = {}
        self.tables: dict[Analyzer, TermTable] = {}
        self.book: CharCodebook | None = None
        self.ng: sp.csr_matrix | None = None  # words x char_wb terms
        self.registry = TokenRegistry()
        self.tok: sp.csr_matrix | None = None  # words x word terms (tokens, inner bigrams)
        self.first_tok = np.empty(0, dtype=np.int64)  # per word: its first token id, or -1
        self.last_tok = np.empty(0, dtype=np.int64)
        self.xb: dict[str, sp.csr_matrix] = {}  # rows x word terms: bigrams across words
        self.first: dict[str, np.ndarray] = {}  # per row: the section's first token id
        self.last: dict[str, np.ndarray] = {}
        total = len(sections)
        for done, (name, texts) in enumerate(sections.items()):
            if len(texts) != self.n_rows:
                raise ValueError(f"section {name!r} has {len(texts)} rows, not {self.n_rows}")
            self._add_sequences(name, texts)
            if progress is not None:
                progress(done + 1, total, f"tokenized {name}")
        self.word_list = list(ids)
        self._build_words(0)
        if spec.word_max_n:
            for name in self.seq:
                self._section_tokens(name)

    # -- building ---------------------------------------------------------------------

    def _add_sequences(self, name: str, texts: Sequence[str]) -> None:
        # row by row: a whole section's words as Python strings at once (8M at the seed's
        # size) left hundreds of MB of freed small objects in the process
        lens = np.empty(len(texts), dtype=np.int64)
        parts: list[np.ndarray] = []
        get = self._ids.__getitem__
        for i, text in enumerate(texts):
            words = text.lower().split()
            lens[i] = len(words)
            parts.append(np.fromiter(map(get, words), dtype=np.int32, count=len(words)))
        seq = np.concatenate(parts) if parts else np.empty(0, dtype=np.int32)
        del parts
        ptr = np.zeros(len(texts) + 1, dtype=np.int64)
        np.cumsum(lens, out=ptr[1:])
        self.seq[name] = seq
        self.ptr[name] = ptr
        self.bags[name] = self._bag(seq, lens)

    def _bag(self, seq: np.ndarray, lens: np.ndarray) -> sp.csr_matrix:
        from toolaudit.leakage._kernels import bag_rows

        row = np.repeat(np.arange(lens.size, dtype=np.int64), lens)
        keys = np.sort((row << _ROW_SHIFT) | seq.astype(np.int64))
        del row
        ptr, idx, val = bag_rows(keys, int(lens.size), _ROW_SHIFT)
        return csr(ptr, idx, val, len(self._ids))

    def _build_words(self, start: int) -> None:
        """n-gram counts of the words with ids ``start`` onwards (appended to ``ng`` and
        ``tok``; new terms registered)."""
        words = self.word_list[start:]
        spec = self.spec
        if spec.char_range is not None:
            lo, hi = spec.char_range
            if self.book is None:
                present = None
                for a in range(0, len(words), 200_000):
                    present = CharCodebook.scan(words[a : a + 200_000], present)
                if present is None:
                    present = np.zeros(0x110000, dtype=bool)
                self.book = CharCodebook(present, max_n=hi)
            elif not self.book.covers(words):
                raise ValueError("extra sections use characters absent from the corpus")
            chunks = [
                char_wb_chunk(part, self.book, min_n=lo, max_n=hi)
                for part in _char_chunks(words, spec.chunk_chars)
            ]
            self.ng = self._append_rows("char_wb", self.ng, chunks)
        if spec.word_max_n:
            tokens: list[str] = []
            n_tok = np.empty(len(words), dtype=np.int64)
            for i, w in enumerate(words):
                found = TOKEN_RE.findall(w)
                n_tok[i] = len(found)
                tokens.extend(found)
            tid = self.registry.encode(tokens)
            doc = np.repeat(np.arange(len(words), dtype=np.int64), n_tok)
            ends = np.cumsum(n_tok)
            has = n_tok > 0
            first = np.full(len(words), -1, dtype=np.int64)
            last = np.full(len(words), -1, dtype=np.int64)
            first[has] = tid[(ends - n_tok)[has]]
            last[has] = tid[ends[has] - 1]
            self.first_tok = np.concatenate([self.first_tok, first])
            self.last_tok = np.concatenate([self.last_tok, last])
            keys, docs = [tid], [doc]
            if spec.word_max_n >= 2 and tid.size > 1:
                same = doc[1:] == doc[:-1]
                keys.append(bigram_keys(tid[:-1][same], tid[1:][same]))
                docs.append(doc[:-1][same])
            ch = _count(np.concatenate(docs), np.concatenate(keys), len(words))
            self.tok = self._append_rows("word", self.tok, [ch])

    def _append_rows(
        self, analyzer: Analyzer, mat: sp.csr_matrix | None, chunks: list[ChunkCounts]
    ) -> sp.csr_matrix:
        """``mat`` with the chunks' rows appended, their keys mapped to term ids."""
        if analyzer not in self.tables:
            keys = [c.keys for c in chunks if c.keys.size]
            self.tables[analyzer] = TermTable(
                np.unique(np.concatenate(keys)) if keys else np.empty(0, np.int64)
            )
        table = self.tables[analyzer]
        parts = []
        for ch in chunks:
            m = ch.counts.tocsr()
            col = table.lookup(ch.keys, add=True) if ch.keys.size else np.empty(0, np.int64)
            parts.append((m.data, col[m.indices], m.indptr, m.shape[0]))
        n_cols = table.size
        blocks = [sp.csr_matrix((d, i, p), shape=(r, n_cols)) for d, i, p, r in parts]
        if mat is not None:
            blocks.insert(0, csr(mat.indptr, mat.indices, mat.data, n_cols))
        out = sp.vstack(blocks, format="csr") if blocks else sp.csr_matrix((0, n_cols))
        out.sort_indices()
        return csr(
            out.indptr.astype(np.int64),
            out.indices.astype(np.int32),
            out.data.astype(np.int32),
            n_cols,
        )

    def _section_tokens(self, name: str) -> None:
        """Bigrams across consecutive words of each row, and each row's first and last
        token (for bigrams across sections)."""
        seq, ptr = self.seq[name], self.ptr[name]
        ft = self.first_tok[seq]
        lt = self.last_tok[seq]
        pos = np.flatnonzero(ft >= 0)
        row = np.searchsorted(ptr, pos, side="right") - 1
        n = self.n_rows
        first = np.full(n, -1, dtype=np.int64)
        last = np.full(n, -1, dtype=np.int64)
        if pos.size:
            starts = np.ones(pos.size, dtype=bool)
            starts[1:] = row[1:] != row[:-1]
            first[row[starts]] = ft[pos[starts]]
            stops = np.ones(pos.size, dtype=bool)
            stops[:-1] = row[1:] != row[:-1]
            last[row[stops]] = lt[pos[stops]]
        self.first[name] = first
        self.last[name] = last
        if self.spec.word_max_n >= 2 and pos.size > 1:
            same = ~starts[1:]
            keys = bigram_keys(lt[pos[:-1]][same], ft[pos[1:]][same])
            self.xb[name] = _counts_csr(row[1:][same], keys, n, self.tables["word"])
        else:
            self.xb[name] = csr(
                np.zeros(n + 1, np.int64), np.empty(0, np.int32), np.empty(0, np.int32), 0
            )

    # -- extending --------------------------------------------------------------------

    @property
    def n_words(self) -> int:
        """Number of distinct words (columns of the bags)."""
        return len(self._ids)

    def word_ids(self, words: Sequence[str]) -> np.ndarray:
        """Ids of (lowercased) words, registering new ones with their n-gram counts."""
        start = len(self._ids)
        out = np.fromiter(map(self._ids.__getitem__, words), dtype=np.int32, count=len(words))
        if len(self._ids) > start:
            self.word_list.extend(list(self._ids)[start:])
            self._build_words(start)
        return out

    def add_section(self, name: str, texts: Sequence[str]) -> None:
        """Tokenize one more section (e.g. a scope whose sections interleave)."""
        start = len(self._ids)
        self._add_sequences(name, texts)
        if len(self._ids) > start:
            self.word_list.extend(list(self._ids)[start:])
            self._build_words(start)
        if self.spec.word_max_n:
            self._section_tokens(name)

    def drop_sections(self, names: Sequence[str]) -> None:
        """Forget sections (their words and terms stay)."""
        for name in names:
            for store in (self.seq, self.ptr, self.bags, self.xb, self.first, self.last):
                store.pop(name, None)

    def drop_word_terms(self) -> None:
        """Forget the word analyzer's counts (tokens, bigrams across words and sections),
        when only char_wb n-grams are read from here on."""
        self.tok = None
        self.xb.clear()
        self.first.clear()
        self.last.clear()
        self.tables.pop("word", None)
        self.registry = TokenRegistry()
        self.first_tok = np.empty(0, dtype=np.int64)
        self.last_tok = np.empty(0, dtype=np.int64)
        self.spec = CorpusSpec(word_max_n=0, char_range=self.spec.char_range)

    def keep_char_lengths(self, lo: int, hi: int, lengths: np.ndarray) -> None:
        """Keep only the char_wb n-grams of ``lo``..``hi`` characters in the per-word
        counts (``lengths``: characters per term id); term ids stay, and words added
        later are counted in that range only."""
        if self.ng is None or self.spec.char_range is None:
            return
        from toolaudit.leakage._kernels import restrict_columns

        keep = np.flatnonzero((lengths >= lo) & (lengths <= hi))
        colmap = np.full(self.ng.shape[1], -1, dtype=np.int32)
        colmap[keep] = keep.astype(np.int32)
        ptr, idx, val = restrict_columns(*csr_arrays(self.ng), colmap)
        self.ng = csr(ptr, idx, val, self.ng.shape[1])
        self.spec = CorpusSpec(
            word_max_n=self.spec.word_max_n, char_range=(lo, hi), chunk_chars=self.spec.chunk_chars
        )

    # -- scopes -----------------------------------------------------------------------

    def scope_bag(self, names: Sequence[str]) -> sp.csr_matrix:
        """rows x words: the words of the sections ``names`` joined."""
        n_cols = self.n_words
        total: sp.csr_matrix | None = None
        for name in names:
            b = self.bags[name]
            piece = csr(b.indptr, b.indices, b.data, n_cols)
            total = piece if total is None else total + piece
        if total is None:
            return csr(
                np.zeros(self.n_rows + 1, np.int64),
                np.empty(0, np.int32),
                np.empty(0, np.int32),
                n_cols,
            )
        if len(names) > 1:
            total = sp.csr_matrix(total)
            total.sort_indices()
        return total

    def scope_terms(self, names: Sequence[str]) -> sp.csr_matrix | None:
        """rows x word terms: bigrams across words and across sections (word analyzer)."""
        if not self.spec.word_max_n:
            return None
        table = self.tables["word"]
        extra = self._boundary_bigrams(names) if self.spec.word_max_n >= 2 else None
        n_cols = table.size
        total: sp.csr_matrix | None = None
        for mat in [self.xb[n] for n in names] + ([extra] if extra is not None else []):
            piece = csr(mat.indptr, mat.indices, mat.data, n_cols)
            total = piece if total is None else total + piece
        if total is None:
            return None
        total = sp.csr_matrix(total)
        total.sort_indices()
        return total

    def _boundary_bigrams(self, names: Sequence[str]) -> sp.csr_matrix | None:
        if len(names) < 2:
            return None
        prev = np.full(self.n_rows, -1, dtype=np.int64)
        rows, keys = [], []
        for name in names:
            first, last = self.first[name], self.last[name]
            has = first >= 0
            pair = has & (prev >= 0)
            rows.append(np.flatnonzero(pair))
            keys.append(bigram_keys(prev[pair], first[pair]))
            prev = np.where(has, last, prev)
        return _counts_csr(
            np.concatenate(rows), np.concatenate(keys), self.n_rows, self.tables["word"]
        )

    def bigrams_between(self, prev: np.ndarray, first: np.ndarray) -> sp.csr_matrix:
        """rows x word terms: the bigram ``prev[i] first[i]`` where both tokens exist
        (a section whose rows' first tokens are ``first`` appended after tokens
        ``prev``)."""
        pair = (first >= 0) & (prev >= 0)
        keys = bigram_keys(prev[pair], first[pair])
        return _counts_csr(np.flatnonzero(pair), keys, self.n_rows, self.tables["word"])

    def per_word(self, analyzer: Analyzer) -> sp.csr_matrix:
        """words x terms: each word's counts for ``analyzer``."""
        mat = self.ng if analyzer == "char_wb" else self.tok
        if mat is None or analyzer not in self.tables:
            raise ValueError(f"the corpus has no {analyzer} n-grams")
        return mat

    # -- terms ------------------------------------------------------------------------

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


def _char_chunks(words: list[str], chunk_chars: int) -> list[list[str]]:
    out: list[list[str]] = []
    cur: list[str] = []
    size = 0
    for w in words:
        cur.append(w)
        size += len(w) + 1
        if size >= chunk_chars:
            out.append(cur)
            cur, size = [], 0
    if cur or not out:
        out.append(cur)
    return out

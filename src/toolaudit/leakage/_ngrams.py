"""Vectorized n-gram extraction that reproduces scikit-learn's analyzers exactly.

Two analyzers are supported, both on lowercased text:

* ``word``: tokens from ``(?u)\\b\\w\\w+\\b`` (the ``re`` module, C speed) plus bigrams of
  adjacent tokens. Terms are integer keys: a unigram is its token id, a bigram
  ``(a + 1) << 32 | b``.
* ``char_wb``: every whitespace-delimited word is padded with one space on each side and
  cut into windows of ``min_n..max_n`` characters. We build one stream per chunk in
  which words are separated by single spaces; a window of the stream is a char_wb
  n-gram exactly when it has no space strictly inside it. Characters are mapped to
  dense codes in code-point order and a window is packed into one int64 *left aligned*
  (``sum code_k * B**(max_n-1-k)``), so integer order equals Python string order and
  ``np.unique`` sorts terms the way ``sorted(vocabulary)`` does.

All heavy work is numpy on code-point arrays; no Python loop runs per character.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from toolaudit.errors import DataError

TOKEN_RE = re.compile(r"(?u)\b\w\w+\b")
_N_CODEPOINTS = 0x110000
_INT64_MAX = np.iinfo(np.int64).max
_BIGRAM_SHIFT = np.int64(32)


@dataclass(frozen=True, slots=True)
class ChunkCounts:
    """Counts of one chunk of documents: sorted unique keys and a (docs x keys) CSR."""

    keys: np.ndarray
    counts: sp.csr_matrix


def _count(doc: np.ndarray, keys: np.ndarray, n_docs: int) -> ChunkCounts:
    """Unique keys and a per-document count matrix (columns in key order)."""
    if keys.size == 0:
        return ChunkCounts(np.empty(0, np.int64), sp.csr_matrix((n_docs, 0), dtype=np.int32))
    uniq, inv = np.unique(keys, return_inverse=True)
    mat = sp.coo_matrix(
        (np.ones(keys.size, dtype=np.int32), (doc, inv.ravel())), shape=(n_docs, uniq.size)
    ).tocsr()
    mat.sum_duplicates()
    return ChunkCounts(uniq, mat)


class CharCodebook:
    """Dense, order-preserving codes for the characters of a corpus (space included)."""

    def __init__(self, present: np.ndarray, *, max_n: int) -> None:
        present = present.copy()
        present[0x20] = True
        present[0x0A] = True  # the section separator
        self.codes = np.cumsum(present, dtype=np.int64) * present  # 0 = absent
        self.alphabet = np.flatnonzero(present).astype(np.uint32)  # code -> code point - 1
        self.base = int(self.alphabet.size) + 1
        self.max_n = max_n
        if self.base**max_n > _INT64_MAX:
            raise DataError(
                f"the texts use {self.alphabet.size} distinct characters; the exact char_wb "
                f"engine packs {max_n}-grams into 64 bits and supports at most "
                f"{int(_INT64_MAX ** (1 / max_n)) - 1} distinct characters"
            )
        self.powers = np.array([self.base ** (max_n - 1 - k) for k in range(max_n)], dtype=np.int64)
        self.space = int(self.codes[0x20])

    @staticmethod
    def scan(texts: list[str], present: np.ndarray | None = None) -> np.ndarray:
        """Mark the code points used by ``texts`` (lowercased) in a boolean table."""
        if present is None:
            present = np.zeros(_N_CODEPOINTS, dtype=bool)
        if texts:
            arr = np.frombuffer("".join(texts).encode("utf-32-le"), dtype=np.uint32)
            present |= np.bincount(arr, minlength=_N_CODEPOINTS)[:_N_CODEPOINTS] > 0
        return present

    def covers(self, texts: list[str]) -> bool:
        """Whether every character of ``texts`` already has a code."""
        if not texts:
            return True
        arr = np.frombuffer("".join(texts).encode("utf-32-le"), dtype=np.uint32)
        used = np.bincount(arr, minlength=_N_CODEPOINTS)[:_N_CODEPOINTS] > 0
        return bool(np.all(self.codes[used] > 0))

    def decode(self, keys: np.ndarray) -> list[str]:
        """The n-gram strings of packed keys."""
        keys = np.asarray(keys, dtype=np.int64)
        digits = (keys[:, None] // self.powers[None, :]) % self.base
        cps = np.where(digits > 0, self.alphabet[np.maximum(digits - 1, 0)], 0).astype("<u4")
        return np.ascontiguousarray(cps).view(f"<U{self.max_n}").ravel().tolist()

    def lengths(self, keys: np.ndarray) -> np.ndarray:
        """Number of characters of each packed key."""
        digits = (np.asarray(keys, np.int64)[:, None] // self.powers[None, :]) % self.base
        return (digits > 0).sum(axis=1).astype(np.int8)


_WS_TABLE: np.ndarray | None = None


def _whitespace_table() -> np.ndarray:
    """``str.isspace`` for every code point (what ``str.split()`` splits on)."""
    global _WS_TABLE
    if _WS_TABLE is None:
        table = np.zeros(_N_CODEPOINTS, dtype=bool)
        for cp in range(0x3000 + 1):
            if chr(cp).isspace():
                table[cp] = True
        _WS_TABLE = table
    return _WS_TABLE


def char_wb_chunk(texts: list[str], book: CharCodebook, *, min_n: int, max_n: int) -> ChunkCounts:
    """char_wb n-gram counts of lowercased ``texts`` (one row per text)."""
    n_docs = len(texts)
    if n_docs == 0:
        return _count(np.empty(0, np.int64), np.empty(0, np.int64), 0)
    lens = np.fromiter((len(t) for t in texts), dtype=np.int64, count=n_docs)
    arr = np.frombuffer("\n".join(texts).encode("utf-32-le"), dtype=np.uint32)
    doc = np.repeat(np.arange(n_docs, dtype=np.int64), lens + 1)[: arr.size]
    ws = _whitespace_table()[arr]
    prev_ws = np.empty_like(ws)
    prev_ws[0] = False
    prev_ws[1:] = ws[:-1]
    keep = ~ws | ~prev_ws  # drop all but the first character of each whitespace run
    stream = np.where(ws, book.space, book.codes[arr])[keep]
    sdoc = doc[keep]
    if stream.size == 0 or stream[0] != book.space:
        stream = np.concatenate([[book.space], stream])
        sdoc = np.concatenate([[0], sdoc])
    if stream[-1] != book.space:
        stream = np.concatenate([stream, [book.space]])
        sdoc = np.concatenate([sdoc, [n_docs - 1]])
    is_sp = stream == book.space
    csp = np.concatenate([[0], np.cumsum(is_sp)])
    m = stream.size
    # doc of a window: a window starting with the padding space belongs to the next char
    wdoc = np.where(is_sp, sdoc[np.minimum(np.arange(1, m + 1), m - 1)], sdoc)
    all_keys = []
    all_docs = []
    key = stream * book.powers[0]
    for n in range(2, max_n + 1):
        if m < n:
            break
        key = key[:-1] + stream[n - 1 :] * book.powers[n - 1]  # windows of length n
        if n < min_n:
            continue
        if n > 2:  # no space strictly inside the window
            pos = np.flatnonzero(csp[n - 1 : m] - csp[1 : m - n + 2] == 0)
            all_keys.append(key[pos])
            all_docs.append(wdoc[pos])
        else:
            all_keys.append(key)
            all_docs.append(wdoc[: key.size])
    keys = np.concatenate(all_keys) if all_keys else np.empty(0, np.int64)
    docs = np.concatenate(all_docs) if all_docs else np.empty(0, np.int64)
    key_bits = int(book.base**max_n - 1).bit_length()
    if key_bits + max(n_docs - 1, 1).bit_length() <= 63:
        return _count_packed(docs, keys, n_docs, key_bits)
    return _count(docs, keys, n_docs)


def _count_packed(doc: np.ndarray, keys: np.ndarray, n_docs: int, key_bits: int) -> ChunkCounts:
    """Like ``_count`` but with one plain sort of ``doc << key_bits | key``."""
    if keys.size == 0:
        return _count(doc, keys, n_docs)
    packed = np.sort((doc << np.int64(key_bits)) | keys)
    change = np.empty(packed.size, dtype=bool)
    change[0] = True
    np.not_equal(packed[1:], packed[:-1], out=change[1:])
    starts = np.flatnonzero(change)
    counts = np.diff(np.append(starts, packed.size)).astype(np.int32)
    pairs = packed[starts]
    pdoc = pairs >> np.int64(key_bits)
    pkey = pairs & np.int64((1 << key_bits) - 1)
    uniq, inv = _unique_inverse(pkey, key_bits)
    indptr = np.zeros(n_docs + 1, dtype=np.int64)
    indptr[1:] = np.cumsum(np.bincount(pdoc, minlength=n_docs))
    mat = sp.csr_matrix((counts, inv, indptr), shape=(n_docs, uniq.size))
    mat.has_sorted_indices = True
    return ChunkCounts(uniq, mat)


def _unique_inverse(keys: np.ndarray, key_bits: int) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(keys, return_inverse=True)`` via one plain sort of ``key << b | index``
    (a value sort is several times faster than ``argsort``)."""
    idx_bits = max(int(keys.size - 1).bit_length(), 1)
    if key_bits + idx_bits > 63:
        uniq, inv = np.unique(keys, return_inverse=True)
        return uniq, inv.ravel().astype(np.int32)
    comb = np.sort((keys << np.int64(idx_bits)) | np.arange(keys.size, dtype=np.int64))
    skeys = comb >> np.int64(idx_bits)
    perm = comb & np.int64((1 << idx_bits) - 1)
    change = np.empty(keys.size, dtype=bool)
    change[0] = True
    np.not_equal(skeys[1:], skeys[:-1], out=change[1:])
    inv = np.empty(keys.size, dtype=np.int32)
    inv[perm] = np.cumsum(change, dtype=np.int32) - 1
    return skeys[change], inv


class TokenRegistry:
    """Word tokens seen so far, with dense ids in order of first appearance."""

    def __init__(self) -> None:
        self.ids: dict[str, int] = {}
        self.tokens: list[str] = []

    def encode(self, tokens: list[str]) -> np.ndarray:
        """Ids of ``tokens``, registering new ones."""
        ids = self.ids
        start = len(ids)
        out = np.fromiter(
            (ids.setdefault(t, len(ids)) for t in tokens), dtype=np.int64, count=len(tokens)
        )
        if len(ids) > start:
            self.tokens.extend(list(ids)[start:])
        return out

    def term(self, key: int) -> str:
        """The string of a word term key (unigram or bigram)."""
        if key < (1 << 32):
            return self.tokens[key]
        return self.tokens[(key >> 32) - 1] + " " + self.tokens[key & 0xFFFFFFFF]


@dataclass(frozen=True, slots=True)
class WordChunk:
    """Word-term counts of a chunk plus each document's first and last token id (-1)."""

    counts: ChunkCounts
    first: np.ndarray
    last: np.ndarray


def bigram_keys(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Keys of the bigrams ``tokens[a] + " " + tokens[b]``."""
    return ((a.astype(np.int64) + 1) << _BIGRAM_SHIFT) | b.astype(np.int64)


def word_chunk(texts: list[str], registry: TokenRegistry, *, max_n: int) -> WordChunk:
    """Word 1-gram (and, with ``max_n == 2``, 2-gram) counts of lowercased ``texts``."""
    n_docs = len(texts)
    toks: list[str] = []
    counts = np.zeros(n_docs, dtype=np.int64)
    for i, text in enumerate(texts):
        found = TOKEN_RE.findall(text)
        counts[i] = len(found)
        toks.extend(found)
    ids = registry.encode(toks)
    doc = np.repeat(np.arange(n_docs, dtype=np.int64), counts)
    ends = np.cumsum(counts)
    starts = ends - counts
    has = counts > 0
    first = np.full(n_docs, -1, dtype=np.int64)
    last = np.full(n_docs, -1, dtype=np.int64)
    first[has] = ids[starts[has]]
    last[has] = ids[ends[has] - 1]
    keys = [ids]
    docs = [doc]
    if max_n >= 2 and ids.size > 1:
        same = doc[1:] == doc[:-1]
        keys.append(bigram_keys(ids[:-1][same], ids[1:][same]))
        docs.append(doc[:-1][same])
    return WordChunk(_count(np.concatenate(docs), np.concatenate(keys), n_docs), first, last)


def merge_chunks(chunks: list[ChunkCounts], table_keys: np.ndarray) -> sp.csr_matrix:
    """Stack chunk matrices with columns remapped to ids of the sorted ``table_keys``."""
    mats = []
    for ch in chunks:
        m = ch.counts.tocsr()
        if ch.keys.size:
            col = np.searchsorted(table_keys, ch.keys)
            m = sp.csr_matrix(
                (m.data, col[m.indices], m.indptr), shape=(m.shape[0], table_keys.size)
            )
        else:
            m = sp.csr_matrix((m.shape[0], table_keys.size), dtype=np.int32)
        mats.append(m)
    out = sp.vstack(mats, format="csr") if mats else sp.csr_matrix((0, table_keys.size))
    out.sort_indices()
    return out

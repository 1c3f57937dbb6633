"""The PT2D engine: tokenize each distinct word once, compose scopes, fit.

``PT2DEngine`` turns Examples into per-tool columns (the sections of one tool joined with
``"\\n"``, exactly what ``Example.trace(tools=[tool])`` gives), splits them into word
sequences and tokenizes each distinct word once (``_words.WordCorpus``). The TF-IDF
design of any scope and fold is then written by compiled kernels (``_kernels``) straight
from the rows' word bags, and the eval rows are scored without their matrix being built.
Fits are independent; ``_fits`` schedules them (threads, joblib or a Dask cluster).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from toolaudit.leakage._features import (
    FeatureSpec,
    min_df_for,
    vocabulary_from_stats,
)
from toolaudit.leakage._kernels import (
    Recipe,
    design_rows,
    launch,
    restrict_columns,
    score_rows,
    term_stats,
)
from toolaudit.leakage._tron import FitMatrix, index_type
from toolaudit.leakage._words import CorpusSpec, WordCorpus, csr_arrays
from toolaudit.progress import Progress
from toolaudit.traces import Example

logger = logging.getLogger(__name__)

#: Rows per block when an eval matrix is built in blocks.
BLOCK_ROWS = 1024


@dataclass(frozen=True, slots=True)
class ToolColumns:
    """Examples laid out as one text column per tool name.

    ``canonical`` is True when every example lists its sections grouped by tool in the
    global order, so that the full trace equals the tool columns joined in order.
    """

    order: tuple[str, ...]
    texts: dict[str, list[str]]
    missing: dict[str, int]
    canonical: bool
    calls: dict[str, np.ndarray] | None = None

    @classmethod
    def from_examples(cls, examples: Sequence[Example]) -> ToolColumns:
        """Group each example's sections by tool name (absent tool = empty text)."""
        order: dict[str, None] = {}
        for ex in examples:
            for sec in ex.tools:
                order.setdefault(sec.name, None)
        names = tuple(order)
        rank = {n: i for i, n in enumerate(names)}
        texts: dict[str, list[str]] = {n: [] for n in names}
        missing = dict.fromkeys(names, 0)
        calls = {n: np.zeros(len(examples), dtype=np.int32) for n in names}
        canonical = True
        for row, ex in enumerate(examples):
            by_name: dict[str, list[str]] = {}
            seq = [rank[s.name] for s in ex.tools]
            blocks = [r for i, r in enumerate(seq) if i == 0 or seq[i - 1] != r]
            if blocks != sorted(set(blocks)):
                canonical = False
            for sec in ex.tools:
                by_name.setdefault(sec.name, []).append(sec.content)
            for n in names:
                parts = by_name.get(n)
                if parts is None:
                    missing[n] += 1
                else:
                    calls[n][row] = len(parts)
                texts[n].append("\n".join(parts) if parts else "")
        return cls(names, texts, missing, canonical, calls)


class PT2DEngine:
    """Counts for every scope of a set of examples, and the design matrices of a fit.

    ``threads`` is the number of threads of the compiled kernels (default: every core);
    results do not depend on it (see ``_kernels``).
    """

    def __init__(
        self,
        examples: Sequence[Example],
        specs: Sequence[FeatureSpec],
        *,
        progress: Progress | None = None,
        columns: ToolColumns | None = None,
        threads: int | None = None,
    ) -> None:
        self.examples = examples
        self.columns = columns or ToolColumns.from_examples(examples)
        self.threads = max(1, threads if threads is not None else (os.cpu_count() or 1))
        word = [s for s in specs if s.analyzer == "word"]
        char = [s for s in specs if s.analyzer == "char_wb"]
        char_range = None
        if char:
            char_range = (min(s.ngram_range[0] for s in char), max(s.ngram_range[1] for s in char))
        self.corpus_spec = CorpusSpec(
            word_max_n=max((s.ngram_range[1] for s in word), default=0), char_range=char_range
        )
        self.corpus = WordCorpus(self.columns.texts, self.corpus_spec, progress=progress)
        self._lengths: np.ndarray | None = None
        self._explicit: dict[tuple[str, ...], str] = {}

    @property
    def tools(self) -> tuple[str, ...]:
        """Tool names in trace order."""
        return self.columns.order

    def scope_tools(self, scope: str) -> list[str]:
        """Tools of a scope name: ``full`` is every tool; else the tool itself."""
        return list(self.tools) if scope == "full" else [scope]

    def counts(self, analyzer: str, tools: Sequence[str]) -> ScopeSource:
        """The recipe of ``Example.trace(tools)``'s counts (composed on demand)."""
        ordered = [t for t in self.tools if t in set(tools)]
        names = ordered
        if analyzer == "word" and not self.columns.canonical and len(ordered) > 1:
            # interleaved sections: boundary bigrams need the real order, so tokenize it
            key = tuple(ordered)
            if key not in self._explicit:
                name = f"__scope_{len(self._explicit)}"
                texts = [ex.trace(tools=list(ordered)) for ex in self.examples]
                self.corpus.add_section(name, texts)
                self._explicit[key] = name
            names = [self._explicit[key]]
        corpus = self.corpus
        bag = corpus.scope_bag(names)
        terms = corpus.scope_terms(names) if analyzer == "word" else None
        return ScopeSource.from_matrices(corpus, analyzer, bag, terms, threads=self.threads)

    def term_lengths(self, analyzer: str) -> np.ndarray | None:
        """Characters per char_wb term id (recomputed when the table grows)."""
        if analyzer != "char_wb":
            return None
        size = self.corpus.tables["char_wb"].size
        if self._lengths is None or self._lengths.size != size:
            self._lengths = self.corpus.term_lengths("char_wb")
        return self._lengths

    def design(
        self,
        counts: ScopeSource | sp.csr_matrix,
        spec: FeatureSpec,
        fit: np.ndarray,
        ev: np.ndarray,
        *,
        lazy_eval: bool = False,
    ) -> Design:
        """TF-IDF design matrices of one fold (vocabulary and idf from the fit rows).

        One pass over the fit rows' recipes counts each term's document frequency and
        total; the vocabulary is chosen from them exactly as ``_limit_features`` does;
        a second pass writes the fit rows' TF-IDF values straight into their CSR arrays.
        The eval rows are an :class:`EvalMatrix`: with ``lazy_eval`` it is scored
        without being built (or built on call); otherwise it is built here. A ready
        count matrix (rows = examples) is accepted too.
        """
        if not isinstance(counts, ScopeSource):
            counts = ScopeSource.from_matrices(
                self.corpus, spec.analyzer, None, counts, threads=self.threads
            )
        df, tf = counts.term_stats(fit)
        min_df = min_df_for(fit.size, spec)
        used = spec if min_df == spec.min_df else spec.with_min_df(min_df)
        vocab = self._vocab(df, tf, fit.size, used)
        if vocab.size == 0 and used.min_df != 1:
            used = spec.with_min_df(1)
            vocab = self._vocab(df, tf, fit.size, used)
        if vocab.size == 0:  # the scope has no text in these fit rows
            empty = sp.csr_matrix((fit.size, 0))
            return Design(empty, sp.csr_matrix((ev.size, 0)), vocab, used.min_df)
        doc_freq = df[vocab]
        idf = idf_from_df(doc_freq, fit.size)
        restricted = counts.restricted(vocab)
        nnz = int(doc_freq.sum())
        # rows with a sizeable share of the columns are read back densely, untracked
        restricted.track = nnz * 16 < vocab.size * max(fit.size, 1)
        x_fit = restricted.matrix(fit, idf, nnz=nnz)
        logger.debug(
            "design %s: fit %d rows x %d terms, %d non-zeros", spec.name, *x_fit.shape, x_fit.nnz
        )
        if not ev.size:
            return Design(x_fit, None, vocab, used.min_df)
        x_eval = EvalMatrix(restricted, idf, ev)
        return Design(x_fit, x_eval if lazy_eval else x_eval(), vocab, used.min_df)

    def _vocab(self, df: np.ndarray, tf: np.ndarray, n_docs: int, spec: FeatureSpec) -> np.ndarray:
        analyzer = spec.analyzer
        return vocabulary_from_stats(
            df,
            lambda: tf,
            n_docs,
            spec,
            string_order=lambda ids: self.corpus.string_order(analyzer, ids),
            term_lengths=self.term_lengths(analyzer),
        )

    def terms(self, analyzer: str, ids: np.ndarray) -> list[str]:
        """Term strings of ids."""
        return self.corpus.term_strings(analyzer, ids)


def idf_from_df(df: np.ndarray, n_samples: int) -> np.ndarray:
    """Smoothed idf from document frequencies, in ``TfidfTransformer.fit``'s operations
    (what ``idf_weights`` computes from the fit matrix's columns)."""
    d = np.asarray(df, dtype=np.float64) + 1.0
    idf = np.full_like(d, fill_value=n_samples + 1, dtype=np.float64)
    idf /= d
    np.log(idf, out=idf)
    idf += 1.0
    return idf


class ScopeSource:
    """The counts of one scope (or dilution point) as a recipe over the corpus's words
    (``_kernels.Recipe``) with ``k`` of its slots, plus the per-word n-gram counts; the
    counts themselves are never stored. ``restricted(vocab)`` gives the same recipe
    over a vocabulary's columns, from which the kernels write TF-IDF rows or scores."""

    def __init__(
        self,
        recipe: Recipe,
        per_word: sp.csr_matrix,
        n_terms: int,
        *,
        k: int = 0,
        threads: int = 1,
    ) -> None:
        self.recipe = recipe
        self.per_word = per_word
        self.n_terms = int(n_terms)
        self.k = int(k)
        self.threads = max(1, int(threads))
        self._ng = csr_arrays(per_word)
        self._stats: dict[bytes, tuple[np.ndarray, np.ndarray]] = {}

    @classmethod
    def from_matrices(
        cls,
        corpus: WordCorpus,
        analyzer: str,
        bag: sp.csr_matrix | None,
        terms: sp.csr_matrix | None,
        *,
        threads: int = 1,
    ) -> ScopeSource:
        """A scope of word counts ``bag`` (rows x words) plus explicit term counts
        ``terms`` (rows x terms); either may be None."""
        if bag is None:
            rows = terms.shape[0] if terms is not None else corpus.n_rows
            bag = sp.csr_matrix((int(rows), 0), dtype=np.int32)
        per_word = corpus.per_word(analyzer) if analyzer in corpus.tables else None
        n_terms = corpus.tables[analyzer].size if analyzer in corpus.tables else 0
        if terms is not None:
            terms = sp.csr_matrix(terms)
            terms.sum_duplicates()
            n_terms = max(n_terms, terms.shape[1])
        if per_word is None or bag.shape[1] == 0:
            per_word = sp.csr_matrix((max(bag.shape[1], 0), n_terms), dtype=np.int32)
        recipe = Recipe(
            (bag.indptr, bag.indices, bag.data),
            None if terms is None else (terms.indptr, terms.indices, terms.data),
        )
        return cls(recipe, per_word, n_terms, threads=threads)

    def term_stats(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Per term: the number of ``rows`` that contain it (int64) and its total count
        (float64; integers, so exactly what a sum over the whole matrix gives)."""
        rows = np.ascontiguousarray(rows, dtype=np.int64)
        key = rows.tobytes()
        if key not in self._stats:
            self._stats[key] = self.stats_at(rows, [self.k])[0]
        return self._stats[key]

    def stats_at(self, rows: np.ndarray, ks: Sequence[int]) -> list[tuple[np.ndarray, np.ndarray]]:
        """``term_stats`` of ``rows`` with the first ``k`` slots, for each ``k`` of
        ``ks`` (ascending), in one pass over the rows."""
        df, tf = launch(
            term_stats,
            np.ascontiguousarray(rows, dtype=np.int64),
            np.asarray(ks, dtype=np.int64),
            self.n_terms,
            self.threads,
            *self.recipe.args,
            *self._ng,
        )
        return [(df[q].astype(np.int64), tf[q].astype(np.float64)) for q in range(len(ks))]

    def at(self, k: int) -> ScopeSource:
        """The same recipe with its first ``k`` slots (statistics not shared)."""
        return ScopeSource(self.recipe, self.per_word, self.n_terms, k=k, threads=self.threads)

    def set_stats(self, rows: np.ndarray, stats: tuple[np.ndarray, np.ndarray]) -> None:
        """Give ``term_stats(rows)`` its value (computed by ``stats_at``)."""
        self._stats[np.ascontiguousarray(rows, dtype=np.int64).tobytes()] = stats

    def count_matrix(self, rows: np.ndarray) -> tuple[sp.csr_matrix, np.ndarray]:
        """The term counts of ``rows`` over the terms that occur in them: ``(counts,
        term ids of its columns)`` (for checks; the audit never builds it)."""
        df, _ = self.term_stats(rows)
        ids = np.flatnonzero(df)
        mat = self.restricted(ids).matrix(rows, None, nnz=int(df.sum())).tocsr()
        return sp.csr_matrix(mat, dtype=np.int64), ids

    def restricted(self, vocab: np.ndarray) -> Restricted:
        """The recipe over the columns ``vocab`` (in that order)."""
        colmap = np.full(max(self.n_terms, 1), -1, dtype=np.int32)
        colmap[vocab] = np.arange(vocab.size, dtype=np.int32)
        ptr, idx, val = restrict_columns(*self._ng, colmap)
        ng = _compact(ptr, idx, val, int(vocab.size))
        args = list(self.recipe.args)
        args[3:6] = restrict_columns(args[3], args[4], args[5], colmap)
        return Restricted(tuple(args), ng, int(vocab.size), self.k, self.threads)


def _compact(
    ptr: np.ndarray, idx: np.ndarray, val: np.ndarray, n_cols: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per-word counts over a vocabulary in 16-bit indices and values where they fit:
    the kernels read these rows at random, and a quarter of the bytes is fewer cache
    misses (the sums do not change)."""
    if n_cols <= 1 << 16:
        idx = idx.astype(np.uint16)
    if val.size == 0 or (val.min() >= 0 and val.max() < 1 << 16):
        val = val.astype(np.uint16)
    return ptr, idx, val


class Restricted:
    """A recipe over a vocabulary's columns: TF-IDF rows (``matrix``) or their scores."""

    def __init__(
        self,
        args: tuple[np.ndarray, ...],
        ng: tuple[np.ndarray, ...],
        n_cols: int,
        k: int,
        threads: int,
    ) -> None:
        self.args = args
        self.ng = ng
        self.n_cols = n_cols
        self.k = k
        self.threads = threads
        self.track = True  # False: every row is read back densely (see design_rows)

    def nnz(self, rows: np.ndarray) -> int:
        """The number of non-zeros of ``rows``'s matrix."""
        df, _ = launch(
            term_stats,
            np.ascontiguousarray(rows, dtype=np.int64),
            np.array([self.k], dtype=np.int64),
            self.n_cols,
            self.threads,
            *self.args,
            *self.ng,
        )
        return int(df.sum())

    def matrix(
        self, rows: np.ndarray, idf: np.ndarray | None, *, nnz: int | None = None
    ) -> FitMatrix:
        """The TF-IDF rows of ``rows`` (CSR layout, sorted 16- or 32-bit indices, float64);
        with ``idf`` None, the counts themselves (as floats)."""
        rows = np.ascontiguousarray(rows, dtype=np.int64)
        if nnz is None:
            nnz = self.nnz(rows)
        raw = idf is None
        weights = np.ones(self.n_cols) if idf is None else idf
        data = np.empty(int(nnz), dtype=np.float64)
        indices: np.ndarray = np.empty(int(nnz), dtype=index_type(self.n_cols))
        indptr, ok = launch(
            design_rows,
            rows,
            self.k,
            self.n_cols,
            weights,
            data,
            indices,
            self.threads,
            raw,
            self.track,
            *self.args,
            *self.ng,
        )
        if not ok:
            raise RuntimeError("the design's number of non-zeros was not the expected one")
        return FitMatrix(data, indices, indptr, (int(rows.size), self.n_cols))

    def scores(
        self, rows: np.ndarray, idf: np.ndarray, coef: np.ndarray, intercept: float
    ) -> np.ndarray:
        """``matrix(rows, idf) @ coef + intercept`` without building the matrix."""
        out: np.ndarray = launch(
            score_rows,
            np.ascontiguousarray(rows, dtype=np.int64),
            self.k,
            self.n_cols,
            idf,
            np.ascontiguousarray(coef, dtype=np.float64),
            float(intercept),
            self.threads,
            self.track,
            *self.args,
            *self.ng,
        )
        return out


class EvalMatrix:
    """The TF-IDF matrix of the eval rows (fit vocabulary and idf): scored without being
    built (``scores``), built on call, or built in row blocks."""

    def __init__(self, source: Restricted, idf: np.ndarray, rows: np.ndarray) -> None:
        self.source = source
        self.idf = idf
        self.rows = np.asarray(rows, dtype=np.int64)

    @property
    def n_rows(self) -> int:
        """Number of eval rows."""
        return int(self.rows.size)

    def __call__(self) -> sp.csr_matrix:
        """Build the matrix (exactly what ``design(..., lazy_eval=False)`` returns)."""
        return self.source.matrix(self.rows, self.idf).tocsr()

    def blocks(self) -> Iterator[sp.csr_matrix]:
        """The same matrix in consecutive blocks of ``BLOCK_ROWS`` rows."""
        for a in range(0, int(self.rows.size), BLOCK_ROWS):
            yield self.source.matrix(self.rows[a : a + BLOCK_ROWS], self.idf).tocsr()

    def scores(self, coef: np.ndarray, intercept: float) -> np.ndarray:
        """The decision scores of a linear model on these rows."""
        return self.source.scores(self.rows, self.idf, coef, intercept)


@dataclass(frozen=True, slots=True)
class Design:
    """One fold's design: fit and eval matrices, the vocabulary (term ids) and the min_df
    actually used (lower than asked when the fit partition is too small)."""

    x_fit: FitMatrix | sp.csr_matrix | None
    x_eval: sp.csr_matrix | EvalMatrix | None
    vocab: np.ndarray
    min_df: int | float

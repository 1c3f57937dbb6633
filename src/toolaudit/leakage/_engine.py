"""The PT2D engine: tokenize each section once, compose scopes, fit in parallel.

``PT2DEngine`` turns Examples into per-tool columns (the sections of one tool joined with
``"\\n"``, exactly what ``Example.trace(tools=[tool])`` gives), extracts their n-grams
once, and builds the TF-IDF design matrices of any scope and fold from the stored
counts. Fits are independent and run through joblib; ``backend`` is passed to
``joblib.parallel_config`` so a Dask or Ray cluster can take large sweeps.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp
from joblib import Parallel, delayed, parallel_config
from threadpoolctl import threadpool_limits

from toolaudit.errors import ConfigError
from toolaudit.leakage._corpus import CorpusSpec, SectionCorpus
from toolaudit.leakage._features import (
    FeatureSpec,
    FitOutput,
    LRSpec,
    fit_and_score,
    idf_weights,
    min_df_for,
    restrict,
    tfidf,
    vocabulary_from_stats,
)
from toolaudit.traces import Example

logger = logging.getLogger(__name__)

#: Rows per block when a design is built (bounds the unrestricted counts in memory).
BLOCK_ROWS = 1024

ProgressFn = Callable[[int, int, str], None]


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
    """Counts for every scope of a set of examples, and the design matrices of a fit."""

    def __init__(
        self,
        examples: Sequence[Example],
        specs: Sequence[FeatureSpec],
        *,
        progress: ProgressFn | None = None,
        columns: ToolColumns | None = None,
    ) -> None:
        self.examples = examples
        self.columns = columns or ToolColumns.from_examples(examples)
        word = [s for s in specs if s.analyzer == "word"]
        char = [s for s in specs if s.analyzer == "char_wb"]
        char_range = None
        if char:
            char_range = (min(s.ngram_range[0] for s in char), max(s.ngram_range[1] for s in char))
        self.corpus_spec = CorpusSpec(
            word_max_n=max((s.ngram_range[1] for s in word), default=0), char_range=char_range
        )
        self.corpus = SectionCorpus(self.columns.texts, self.corpus_spec, progress=progress)
        self._lengths: np.ndarray | None = None
        self._explicit: dict[tuple[str, ...], str] = {}

    @property
    def tools(self) -> tuple[str, ...]:
        """Tool names in trace order."""
        return self.columns.order

    def scope_tools(self, scope: str) -> list[str]:
        """Tools of a scope name: ``full`` is every tool; else the tool itself."""
        return list(self.tools) if scope == "full" else [scope]

    def counts(self, analyzer: str, tools: Sequence[str]) -> ScopeCounts:
        """Term counts of ``Example.trace(tools)``, summed per row subset on demand."""
        ordered = [t for t in self.tools if t in set(tools)]
        if analyzer == "word" and not self.columns.canonical and len(ordered) > 1:
            # interleaved sections: boundary bigrams need the real order, so tokenize it
            key = tuple(ordered)
            if key not in self._explicit:
                name = f"__scope_{len(self._explicit)}"
                texts = [ex.trace(tools=list(ordered)) for ex in self.examples]
                self.corpus.add_sections({name: texts})
                self._explicit[key] = name
            return ScopeCounts(self.corpus, analyzer, [self._explicit[key]])
        return ScopeCounts(self.corpus, analyzer, ordered)

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
        counts: ScopeCounts | sp.csr_matrix,
        spec: FeatureSpec,
        fit: np.ndarray,
        ev: np.ndarray,
        *,
        lazy_eval: bool = False,
    ) -> Design:
        """TF-IDF design matrices of one fold (vocabulary and idf from the fit rows).

        Only the fit rows' counts, then the eval rows' counts, are materialized: the
        counts of the whole scope over every row never exist at once. ``lazy_eval``
        returns the eval matrix as an :class:`EvalMatrix` that builds it when called
        (or row block by row block), so an in-process fit runs before it exists (the
        fit's design is the largest object of the audit).
        """
        if not isinstance(counts, ScopeCounts):
            counts = ScopeCounts.of(counts)
        # the fit rows' counts are never held whole: one pass over row blocks sums each
        # term's document frequency and count, a second builds the restricted matrix
        df, tf = counts.term_stats(fit)
        min_df = min_df_for(fit.size, spec)
        used = spec if min_df == spec.min_df else spec.with_min_df(min_df)
        vocab = self._vocab(df, tf, fit.size, used)
        if vocab.size == 0 and used.min_df != 1:
            used = spec.with_min_df(1)
            vocab = self._vocab(df, tf, fit.size, used)
        del tf
        if vocab.size == 0:  # the scope has no text in these fit rows
            empty = sp.csr_matrix((fit.size, 0))
            return Design(empty, sp.csr_matrix((ev.size, 0)), vocab, used.min_df)
        x_fit = counts.restricted(fit, vocab, nnz=int(df[vocab].sum()))
        idf = idf_weights(x_fit)
        x_fit = tfidf(x_fit, idf, copy=False)
        logger.debug(
            "design %s: fit %d rows x %d terms, %d non-zeros", spec.name, *x_fit.shape, x_fit.nnz
        )
        if not ev.size:
            return Design(x_fit, None, vocab, used.min_df)
        x_eval = EvalMatrix(counts, vocab, idf, ev)
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


class ScopeCounts:
    """The counts of one scope, materialized per row subset: ``rows(idx)`` sums the
    sections' slices for ``idx`` only. ``of(matrix)`` wraps a ready matrix, which
    ``release()`` drops once its last design is built."""

    def __init__(
        self,
        corpus: SectionCorpus | None,
        analyzer: str,
        names: Sequence[str],
        matrix: sp.csr_matrix | None = None,
    ) -> None:
        self.corpus = corpus
        self.analyzer = analyzer
        self.names = list(names)
        self._matrix = matrix

    @classmethod
    def of(cls, matrix: sp.csr_matrix) -> ScopeCounts:
        """Wrap an existing count matrix (rows = examples)."""
        return cls(None, "", [], matrix)

    def rows(self, idx: np.ndarray) -> sp.csr_matrix:
        """Counts of rows ``idx`` (CSR, sorted indices)."""
        if self._matrix is not None:
            out = self._matrix[idx]
            out.sort_indices()
            return out
        if self.corpus is None:
            raise RuntimeError("these counts were released")
        return self.corpus.scope_counts(self.analyzer, self.names, rows=idx)

    def blocks(self, idx: np.ndarray) -> Iterator[sp.csr_matrix]:
        """Counts of ``idx`` in consecutive blocks of ``BLOCK_ROWS`` rows."""
        for a in range(0, int(idx.size), BLOCK_ROWS):
            yield self.rows(idx[a : a + BLOCK_ROWS])

    def term_stats(self, idx: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Per term: the number of rows of ``idx`` that contain it (int64) and its total
        count (float64; integers, so exactly what a sum over the whole matrix gives)."""
        df = np.zeros(0, dtype=np.int64)
        tf = np.zeros(0, dtype=np.float64)
        for blk in self.blocks(idx):
            n = blk.shape[1]
            if n > df.size:  # the term table may have grown (boundary bigrams)
                df = np.concatenate([df, np.zeros(n - df.size, dtype=np.int64)])
                tf = np.concatenate([tf, np.zeros(n - tf.size, dtype=np.float64)])
            df[:n] += np.bincount(blk.indices, minlength=n)
            tf[:n] += np.bincount(blk.indices, weights=blk.data, minlength=n)
        return df, tf

    def restricted(
        self, idx: np.ndarray, vocab: np.ndarray, nnz: int | None = None
    ) -> sp.csr_matrix:
        """Counts of rows ``idx`` in columns ``vocab`` (float64), built block by block
        into arrays allocated once. With ``nnz`` (the result's number of non-zeros, e.g.
        the vocabulary's document frequencies summed) each block is copied in as soon as
        it is restricted, so memory holds the result plus one block; without it the
        restricted blocks are held until their total is known."""
        if nnz is None:
            pieces = [restrict(blk, vocab) for blk in self.blocks(idx)]
            nnz = sum(p.nnz for p in pieces)
            blocks: Iterator[sp.csr_matrix] = iter(pieces)
            del pieces
        else:
            blocks = (restrict(blk, vocab) for blk in self.blocks(idx))
        data = np.empty(nnz, dtype=np.float64)
        indices = np.empty(nnz, dtype=np.int32)
        indptr = np.zeros(int(idx.size) + 1, dtype=np.int64)
        row = pos = 0
        for p in blocks:
            if pos + p.nnz > data.size:  # a wrong count: grow rather than fail
                data = np.resize(data, pos + p.nnz)
                indices = np.resize(indices, pos + p.nnz)
            data[pos : pos + p.nnz] = p.data
            indices[pos : pos + p.nnz] = p.indices
            indptr[row + 1 : row + 1 + p.shape[0]] = pos + p.indptr[1:]
            row += p.shape[0]
            pos += p.nnz
            del p
        if pos != data.size:
            data, indices = data[:pos].copy(), indices[:pos].copy()
        out = sp.csr_matrix((data, indices, indptr), shape=(int(idx.size), vocab.size))
        out.has_sorted_indices = True
        return out

    def release(self) -> None:
        """Drop a wrapped matrix (section-backed counts hold nothing to drop)."""
        self._matrix = None


class EvalMatrix:
    """The TF-IDF matrix of the eval rows, built on call (fit vocabulary and idf)."""

    def __init__(
        self, counts: ScopeCounts, vocab: np.ndarray, idf: np.ndarray, rows: np.ndarray
    ) -> None:
        self.counts = counts
        self.vocab = vocab
        self.idf = idf
        self.rows = rows

    @property
    def n_rows(self) -> int:
        """Number of eval rows."""
        return int(self.rows.size)

    def __call__(self) -> sp.csr_matrix:
        """Build the matrix (exactly what ``design(..., lazy_eval=False)`` returns)."""
        return tfidf(self.counts.restricted(self.rows, self.vocab), self.idf, copy=False)

    def blocks(self) -> Iterator[sp.csr_matrix]:
        """The same matrix in consecutive blocks of ``BLOCK_ROWS`` rows (TF-IDF weights
        and row norms are per row, so each block equals those rows of the whole)."""
        for a in range(0, int(self.rows.size), BLOCK_ROWS):
            rows = self.rows[a : a + BLOCK_ROWS]
            yield tfidf(self.counts.restricted(rows, self.vocab), self.idf, copy=False)


@dataclass(frozen=True, slots=True)
class Design:
    """One fold's design: fit and eval matrices, the vocabulary (term ids) and the min_df
    actually used (lower than asked when the fit partition is too small)."""

    x_fit: sp.csr_matrix | None
    x_eval: sp.csr_matrix | EvalMatrix | None
    vocab: np.ndarray
    min_df: int | float


class _Handover:
    """A job's matrices, handed over once: the job takes them out. joblib keeps a
    reference to a finished job's arguments until it has fetched the next job, that is
    while the next design is built; through this holder that reference no longer keeps
    the finished job's design alive next to the new one."""

    __slots__ = ("x_eval", "x_fit")

    def __init__(self, x_fit: sp.csr_matrix, x_eval: sp.csr_matrix | EvalMatrix | None) -> None:
        self.x_fit: sp.csr_matrix | None = x_fit
        self.x_eval = x_eval

    def take(self) -> tuple[sp.csr_matrix, sp.csr_matrix | EvalMatrix | None]:
        x_fit, x_eval = self.x_fit, self.x_eval
        if x_fit is None:
            raise RuntimeError("this job's matrices were already taken")
        self.x_fit = self.x_eval = None
        return x_fit, x_eval


def _taking_job(mats: _Handover, y_fit: np.ndarray, lr: LRSpec, top_k: int) -> FitOutput:
    x_fit, x_eval = mats.take()
    return _job(x_fit, y_fit, x_eval, lr, top_k)


def _job(
    x_fit: sp.csr_matrix,
    y_fit: np.ndarray,
    x_eval: sp.csr_matrix | EvalMatrix | None,
    lr: LRSpec,
    top_k: int,
) -> FitOutput:
    if x_fit.shape[1] == 0 or np.unique(y_fit).size < 2:
        if x_eval is None:
            n = 0
        else:
            n = x_eval.n_rows if isinstance(x_eval, EvalMatrix) else x_eval.shape[0]
        return FitOutput(np.full(n, np.nan))
    if isinstance(x_eval, EvalMatrix):  # built after the fit, in fit_and_score
        return fit_and_score(x_fit, y_fit, x_eval, lr, top_k=top_k)
    if x_eval is None or x_eval.shape[0] == 0:
        out = fit_and_score(x_fit, y_fit, x_fit[:1], lr, top_k=top_k)
        return FitOutput(np.empty(0), out.top_pos, out.top_neg)
    return fit_and_score(x_fit, y_fit, x_eval, lr, top_k=top_k)


def run_jobs(
    jobs: Iterator[tuple[Any, tuple[sp.csr_matrix, np.ndarray, sp.csr_matrix | None, int]]],
    lr: LRSpec,
    *,
    n_jobs: int = 1,
    backend: str | None = None,
    client: Any = None,
    total: int = 0,
    progress: ProgressFn | None = None,
) -> list[tuple[Any, FitOutput]]:
    """Run independent fits; ``jobs`` yields ``(tag, (x_fit, y_fit, x_eval, top_k))``.

    Jobs are consumed lazily, so only a few design matrices exist at once. ``backend``
    goes to ``joblib.parallel_config`` (default ``threading``); a Dask ``client`` (see
    ``toolaudit.leakage._cluster``) runs them on a cluster instead.
    """
    tags: list[Any] = []
    # a lazily built eval matrix holds the engine: only in-process threads may call it
    lazy_ok = client is None and (backend or "threading") in ("threading", "sequential")

    def ready(x_eval: Any) -> Any:
        return x_eval() if isinstance(x_eval, EvalMatrix) and not lazy_ok else x_eval

    if client is not None:
        from toolaudit.leakage._cluster import run_on_client

        workers = max(len(client.scheduler_info().get("workers", {})), 1)
        calls_ = (
            (tag, (x_fit, y_fit, ready(x_eval), lr, top_k))
            for tag, (x_fit, y_fit, x_eval, top_k) in jobs
        )
        done: list[tuple[Any, FitOutput]] = []
        for i, (tag, res) in enumerate(run_on_client(client, _job, calls_, window=workers + 1)):
            done.append((tag, res))
            if progress is not None:
                progress(i + 1, max(total, i + 1), str(tag))
        return done

    def calls() -> Iterator[Any]:
        for tag, args in jobs:
            tags.append(tag)
            yield delayed(_taking_job)(_Handover(args[0], ready(args[2])), args[1], lr, args[3])
            # drop this job's matrices before the next design is built
            del args

    out: list[tuple[Any, FitOutput]] = []
    # the fits run in scipy's sparse kernels and numpy, which release the GIL, so threads
    # parallelize them without copying matrices; an explicit local backend (loky,
    # multiprocessing, ...) overrides this
    settings: dict[str, Any] = {"n_jobs": n_jobs, "backend": backend or "threading"}
    try:
        config = parallel_config(**settings)
    except ValueError as exc:  # unknown backend, or its package is not installed
        raise ConfigError(f"invalid backend={backend!r}: {exc}") from None
    # one BLAS thread: OpenBLAS splits long dot products across its threads, so the
    # fits' last bits (and those of the scores) would depend on the machine's cores
    with config, threadpool_limits(limits=1, user_api="blas"):
        runner = Parallel(return_as="generator", pre_dispatch="n_jobs")
        for i, res in enumerate(runner(calls())):
            out.append((tags[i], res))
            if progress is not None:
                progress(i + 1, max(total, i + 1), str(tags[i]))
    return out

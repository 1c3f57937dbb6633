"""Fit scheduling: run the independent (scope, feature set, fold) fits that the engine's
designs feed, in this process (one thread or several), through a joblib backend, or on a
Dask cluster (``_cluster``), holding only a few design matrices at once.
"""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from typing import Any

import numpy as np
import scipy.sparse as sp
from joblib import Parallel, delayed, effective_n_jobs, parallel_config
from threadpoolctl import threadpool_limits

from toolaudit.errors import ConfigError
from toolaudit.leakage._engine import EvalMatrix
from toolaudit.leakage._features import FitOutput, LRSpec, fit_and_score
from toolaudit.progress import Progress


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


def _taking_job(
    mats: _Handover, y_fit: np.ndarray, lr: LRSpec, top_k: int, threads: int = 1
) -> FitOutput:
    x_fit, x_eval = mats.take()
    return _job(x_fit, y_fit, x_eval, lr, top_k, threads)


def _job(
    x_fit: sp.csr_matrix,
    y_fit: np.ndarray,
    x_eval: sp.csr_matrix | EvalMatrix | None,
    lr: LRSpec,
    top_k: int,
    threads: int = 1,
) -> FitOutput:
    if x_fit.shape[1] == 0 or np.unique(y_fit).size < 2:
        if x_eval is None:
            n = 0
        else:
            n = x_eval.n_rows if isinstance(x_eval, EvalMatrix) else x_eval.shape[0]
        return FitOutput(np.full(n, np.nan))
    if isinstance(x_eval, EvalMatrix):  # scored after the fit, in fit_and_score
        return fit_and_score(x_fit, y_fit, x_eval, lr, top_k=top_k, threads=threads)
    if x_eval is None or x_eval.shape[0] == 0:
        nothing = sp.csr_matrix((0, x_fit.shape[1]))
        out = fit_and_score(x_fit, y_fit, nothing, lr, top_k=top_k, threads=threads)
        return FitOutput(np.empty(0), out.top_pos, out.top_neg)
    return fit_and_score(x_fit, y_fit, x_eval, lr, top_k=top_k, threads=threads)


def job_label(tag: Any) -> str:
    """A fit's tag in words for progress lines: ``("full", "char_wb_3_5", 0)`` is
    "full trace, char 3-5, fold 1"; a bare fold index is "fold N".

    >>> job_label(("full", "char_wb_3_5", 0)), job_label(("tool:get_order", "word_1_2", 2))
    ('full trace, char 3-5, fold 1', 'tool:get_order, words 1-2, fold 3')
    >>> job_label(4)
    'fold 5'
    """
    from toolaudit.leakage._features import FEATURE_SETS

    parts = tag if isinstance(tag, tuple) else (tag,)
    words = []
    for part in parts:
        if isinstance(part, int):
            words.append(f"fold {part + 1}")
        elif part in FEATURE_SETS:
            spec = FEATURE_SETS[part]
            kind = "words" if spec.analyzer == "word" else "char"
            words.append(f"{kind} {spec.ngram_range[0]}-{spec.ngram_range[1]}")
        elif part == "full":
            words.append("full trace")
        else:
            words.append(str(part))
    return ", ".join(words)


def run_jobs(
    jobs: Iterator[tuple[Any, tuple[sp.csr_matrix, np.ndarray, sp.csr_matrix | None, int]]],
    lr: LRSpec,
    *,
    n_jobs: int = 1,
    backend: str | None = None,
    client: Any = None,
    total: int = 0,
    progress: Progress | None = None,
    threads: int = 1,
) -> list[tuple[Any, FitOutput]]:
    """Run independent fits; ``jobs`` yields ``(tag, (x_fit, y_fit, x_eval, top_k))``.

    ``threads`` is the number of kernel threads of each in-process fit (the solver's
    products; the results do not depend on it); fits on a Dask cluster use one each.

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
                progress(i + 1, max(total, i + 1), job_label(tag))
        return done

    def handed(
        pending: Iterator[tuple[Any, tuple[Any, ...]]],
    ) -> Iterator[tuple[Any, tuple[Any, ...]]]:
        for tag, args in pending:
            tags.append(tag)
            yield tag, (_Handover(args[0], ready(args[2])), args[1], lr, args[3], threads)
            # drop this job's matrices before the next design is built
            del args

    backend_ = backend or "threading"
    try:
        config = parallel_config(n_jobs=n_jobs, backend=backend_)
    except ValueError as exc:  # unknown backend, or its package is not installed
        raise ConfigError(f"invalid backend={backend!r}: {exc}") from None
    out: list[tuple[Any, FitOutput]] = []
    # one BLAS thread: OpenBLAS splits long dot products across its threads, so the
    # fits' last bits (and those of the scores) would depend on the machine's cores
    with config, threadpool_limits(limits=1, user_api="blas"):
        if backend_ == "threading":
            # the fits run in compiled kernels and numpy, which release the GIL, so
            # threads parallelize them without copying matrices. Not joblib's pool: it
            # takes n_jobs jobs from the iterator whenever its queue runs dry, so up to
            # 2 x n_jobs designs would exist at once
            results = _threaded(handed(jobs), effective_n_jobs(n_jobs))
        else:
            runner = Parallel(return_as="generator", pre_dispatch="n_jobs", batch_size=1)
            results = runner(delayed(_taking_job)(*args) for _, args in handed(jobs))
        for i, res in enumerate(results):
            out.append((tags[i], res))
            if progress is not None:
                progress(i + 1, max(total, i + 1), job_label(tags[i]))
    return out


def _threaded(calls: Iterator[tuple[Any, tuple[Any, ...]]], n_jobs: int) -> Iterator[FitOutput]:
    """Run ``_taking_job`` on each call in ``n_jobs`` threads and yield the results in
    order. The next call is taken from ``calls`` (its design built) only when fewer than
    ``n_jobs`` jobs are running, so at most ``n_jobs`` designs exist at once."""
    if n_jobs <= 1:
        for _, args in calls:
            yield _taking_job(*args)
        return
    done: dict[int, FitOutput] = {}
    running: dict[Future[FitOutput], int] = {}
    emitted = 0
    taken = 0
    with ThreadPoolExecutor(max_workers=n_jobs) as pool:
        exhausted = False
        while True:
            while not exhausted and len(running) < n_jobs:
                try:
                    _, args = next(calls)
                except StopIteration:
                    exhausted = True
                    break
                running[pool.submit(_taking_job, *args)] = taken
                taken += 1
                del args
            if not running:
                break
            finished, _ = wait(running, return_when=FIRST_COMPLETED)
            for fut in finished:
                # a failed fit raises here, after the others in flight are waited for
                done[running.pop(fut)] = fut.result()
            while emitted in done:
                yield done.pop(emitted)
                emitted += 1

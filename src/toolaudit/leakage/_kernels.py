"""Compiled kernels of the PT2D engine (numba): term statistics, TF-IDF designs, scores,
and the sparse products of the liblinear solver.

Every row of a scope is a *recipe* over the corpus's distinct words (see ``_words``): a
bag of word ids with counts, explicit term counts (word bigrams across words), and, for
the synthetic dilution sweep, slots that reference a pool section's bag, a range of its
word sequence and a few correction words. A row's term counts are the recipe's words
times each word's n-gram counts (``ng``), summed into one accumulator per thread.

Exactness. Integer counts are exact in any order. The floating-point work repeats
scikit-learn's operations in scikit-learn's order: a design value is ``count * idf``,
the row norm is the sequential sum of squares in column order, each value is divided by
its square root (``inplace_csr_row_normalize_l2``); a score is the sequential dot product
in column order plus the intercept (scipy's ``csr_matvec``). The solver's products split
work so that every sum keeps its order: ``x @ v`` by rows (each row's dot product is
one thread's), ``x.T @ u`` by columns (each column's sum over rows is one thread's, in
row order, as scipy's CSC kernel adds it). No kernel uses fast-math, so nothing is
reassociated or fused: results do not depend on the number of threads.

Array types are fixed (indices int32, pointers int64, counts int32, values float64) so
that each kernel compiles once; ``cache=True`` keeps the machine code between runs.
"""

from __future__ import annotations

import math
import threading
from typing import Any

import numba as nb
import numpy as np

__all__ = [
    "Recipe",
    "bag_rows",
    "column_splits",
    "design_rows",
    "dots",
    "launch",
    "lr_gradient_weights",
    "lr_objective",
    "restrict_columns",
    "row_splits",
    "scatter",
    "score_rows",
    "term_stats",
]

_NJ = {"cache": True, "nogil": True, "boundscheck": False}


def compiled_before() -> bool:
    """Whether numba's cache holds machine code of these kernels (written by an earlier
    run): without it the first audit compiles them, which takes minutes on 2 cores."""
    import os
    from pathlib import Path

    here = Path(__file__)
    folders = [here.parent / "__pycache__"]
    if os.environ.get("NUMBA_CACHE_DIR"):
        folders.append(Path(os.environ["NUMBA_CACHE_DIR"]))
    return any(any(f.rglob(f"{here.stem}.*.nbi")) for f in folders if f.is_dir())


_LAUNCH_LOCK = threading.Lock()


def launch(kernel: Any, *args: Any) -> Any:
    """Call a parallel kernel. numba's ``workqueue`` threading layer (its fallback when
    OpenMP and TBB are missing) must not be entered from two threads at once (joblib's
    threads, a Dask worker's), so there calls are serialized; ``omp`` and ``tbb`` are
    thread-safe."""
    try:
        safe = nb.threading_layer() in ("omp", "tbb")
    except ValueError:  # no parallel kernel has run yet: the layer is not chosen
        safe = False
    if safe:
        return kernel(*args)
    with _LAUNCH_LOCK:
        return kernel(*args)


# -- one row's recipe -----------------------------------------------------------------


@nb.njit(inline="always", **_NJ)
def _add_word(w, weight, ng_ptr, ng_idx, ng_val, acc, stamp, mark, touched, nt, track):
    """Add ``weight`` times word ``w``'s n-gram counts; with ``track``, note each term
    the row touches for the first time (else the row is read back densely)."""
    a = np.uint64(ng_ptr[w])
    b = np.uint64(ng_ptr[w + 1])
    if track:
        for k in range(a, b):
            t = np.uint64(ng_idx[k])
            acc[t] += weight * ng_val[k]
            if stamp[t] != mark:
                stamp[t] = mark
                touched[nt] = t
                nt += 1
    else:
        for k in range(a, b):
            acc[np.uint64(ng_idx[k])] += weight * ng_val[k]
    return nt


@nb.njit(inline="always", **_NJ)
def _add_term(t, weight, acc, stamp, mark, touched, nt, track):
    acc[t] += weight
    if track and stamp[t] != mark:
        stamp[t] = mark
        touched[nt] = t
        nt += 1
    return nt


@nb.njit(**_NJ)
def _accumulate(
    r,
    k,
    b_ptr,
    b_idx,
    b_val,
    t_ptr,
    t_idx,
    t_val,
    s_p,
    s_m,
    s_a,
    s_b,
    x_ptr,
    x_w,
    x_c,
    pb_ptr,
    pb_idx,
    pb_val,
    pseq,
    ng_ptr,
    ng_idx,
    ng_val,
    acc,
    stamp,
    mark,
    touched,
    nt,
    track,
):
    """Add row ``r``'s recipe with its first ``k`` slots (``k`` <= ``s_p.shape[1]``)."""
    for e in range(np.uint64(b_ptr[r]), np.uint64(b_ptr[r + 1])):
        nt = _add_word(
            np.uint64(b_idx[e]), b_val[e], ng_ptr, ng_idx, ng_val, acc, stamp, mark, touched,
            nt, track,
        )  # fmt: skip
    for e in range(np.uint64(t_ptr[r]), np.uint64(t_ptr[r + 1])):
        nt = _add_term(np.uint64(t_idx[e]), t_val[e], acc, stamp, mark, touched, nt, track)
    kmax = s_p.shape[1]
    for j in range(k):
        nt = _add_slot(
            r, j, kmax, s_p, s_m, s_a, s_b, x_ptr, x_w, x_c, pb_ptr, pb_idx, pb_val, pseq,
            ng_ptr, ng_idx, ng_val, acc, stamp, mark, touched, nt, track,
        )  # fmt: skip
    return nt


@nb.njit(inline="always", **_NJ)
def _add_slot(
    r, j, kmax, s_p, s_m, s_a, s_b, x_ptr, x_w, x_c, pb_ptr, pb_idx, pb_val, pseq,
    ng_ptr, ng_idx, ng_val, acc, stamp, mark, touched, nt, track,
):  # fmt: skip
    p = s_p[r, j]
    m = s_m[r, j]
    if p >= 0 and m != 0:
        for e in range(np.uint64(pb_ptr[p]), np.uint64(pb_ptr[p + 1])):
            nt = _add_word(
                np.uint64(pb_idx[e]), m * pb_val[e], ng_ptr, ng_idx, ng_val, acc, stamp, mark,
                touched, nt, track,
            )  # fmt: skip
    for q in range(np.uint64(s_a[r, j]), np.uint64(s_b[r, j])):
        nt = _add_word(
            np.uint64(pseq[q]), 1, ng_ptr, ng_idx, ng_val, acc, stamp, mark, touched, nt, track
        )
    cell = r * kmax + j
    for e in range(np.uint64(x_ptr[cell]), np.uint64(x_ptr[cell + 1])):
        nt = _add_word(
            np.uint64(x_w[e]), x_c[e], ng_ptr, ng_idx, ng_val, acc, stamp, mark, touched, nt,
            track,
        )  # fmt: skip
    return nt


# -- term statistics (document frequency and total count per term) --------------------


@nb.njit(parallel=True, **_NJ)
def term_stats(
    rows, ks, n_terms, n_threads,
    b_ptr, b_idx, b_val, t_ptr, t_idx, t_val,
    s_p, s_m, s_a, s_b, x_ptr, x_w, x_c, pb_ptr, pb_idx, pb_val, pseq,
    ng_ptr, ng_idx, ng_val,
):  # fmt: skip
    """Per checkpoint ``ks[q]`` (number of slots included, ascending): each term's number
    of rows (of ``rows``) with a non-zero count, and its total count. Returns two
    ``(len(ks), n_terms)`` arrays (int32 and int64). Integer sums: the same for any thread count."""
    nq = ks.size
    chunk = (rows.size + n_threads - 1) // n_threads
    df_all = np.zeros((n_threads, nq, n_terms), dtype=np.int32)
    tf_all = np.zeros((n_threads, nq, n_terms), dtype=np.int64)
    for th in nb.prange(n_threads):
        acc = np.zeros(n_terms, dtype=np.int64)
        stamp = np.zeros(n_terms, dtype=np.int64)
        touched = np.empty(n_terms, dtype=np.int64)
        df = df_all[th]
        tf = tf_all[th]
        lo = th * chunk
        hi = min(rows.size, lo + chunk)
        kmax = s_p.shape[1]
        for i in range(lo, hi):
            r = rows[i]
            mark = i + 1
            nt = _accumulate(
                r, 0, b_ptr, b_idx, b_val, t_ptr, t_idx, t_val, s_p, s_m, s_a, s_b, x_ptr,
                x_w, x_c, pb_ptr, pb_idx, pb_val, pseq, ng_ptr, ng_idx, ng_val, acc, stamp,
                mark, touched, 0, True,
            )  # fmt: skip
            j = 0
            for q in range(nq):
                while j < ks[q]:
                    nt = _add_slot(
                        r, j, kmax, s_p, s_m, s_a, s_b, x_ptr, x_w, x_c, pb_ptr, pb_idx,
                        pb_val, pseq, ng_ptr, ng_idx, ng_val, acc, stamp, mark, touched, nt,
                        True,
                    )  # fmt: skip
                    j += 1
                for e in range(nt):
                    t = touched[e]
                    c = acc[t]
                    if c != 0:
                        df[q, t] += 1
                        tf[q, t] += c
            for e in range(nt):
                acc[touched[e]] = 0
    df_out = np.zeros((nq, n_terms), dtype=np.int32)
    tf_out = np.zeros((nq, n_terms), dtype=np.int64)
    for th in range(n_threads):
        df_out += df_all[th]
        tf_out += tf_all[th]
    return df_out, tf_out


# -- designs and scores ----------------------------------------------------------------


@nb.njit(inline="always", **_NJ)
def _emit(acc, touched, nt, n_cols, cols, vals, track):
    """The row's non-zero (column, count) pairs in column order; resets ``acc``. A
    tracked row with few terms sorts its touched list; any other is read densely."""
    n = 0
    if track and nt * 16 < n_cols:
        part = np.sort(touched[:nt])
        for e in range(nt):
            c = part[e]
            v = acc[c]
            if v != 0:
                cols[n] = c
                vals[n] = v
                n += 1
            acc[c] = 0
    else:
        for c in range(n_cols):
            v = acc[c]
            if v != 0:
                cols[n] = c
                vals[n] = v
                n += 1
                acc[c] = 0
    return n


@nb.njit(inline="always", **_NJ)
def _tfidf_row(n, cols, vals, idf, out):
    """``count * idf`` divided by the row's l2 norm, as scikit-learn computes it."""
    total = 0.0
    for e in range(n):
        x = vals[e] * idf[cols[e]]
        out[e] = x
        total += x * x
    if total != 0.0:
        norm = np.sqrt(total)
        for e in range(n):
            out[e] /= norm


@nb.njit(inline="always", **_NJ)
def _values(n, cols, vals, idf, out, raw):
    if raw:
        for e in range(n):
            out[e] = vals[e]
    else:
        _tfidf_row(n, cols, vals, idf, out)


@nb.njit(**_NJ)
def _scratch(n_cols, track):
    """One thread's work arrays for rows over ``n_cols`` columns: the accumulator, the
    touched-term marks and list (tracked rows only), and a row's columns, counts and
    values."""
    width = n_cols if track else 1
    return (
        np.zeros(n_cols, dtype=np.int64),
        np.zeros(width, dtype=np.int64),
        np.empty(width, dtype=np.int64),
        np.empty(n_cols, dtype=np.int64),
        np.empty(n_cols, dtype=np.int64),
        np.empty(n_cols, dtype=np.float64),
    )


@nb.njit(inline="always", **_NJ)
def _row(
    i, r, k, n_cols, idf, raw, track, work,
    b_ptr, b_idx, b_val, t_ptr, t_idx, t_val,
    s_p, s_m, s_a, s_b, x_ptr, x_w, x_c, pb_ptr, pb_idx, pb_val, pseq,
    ng_ptr, ng_idx, ng_val,
):  # fmt: skip
    """Row ``r``'s non-zeros in column order: their number; columns and values are in
    ``work[3]`` and ``work[5]`` (TF-IDF values, or the counts with ``raw``)."""
    acc, stamp, touched, cols, vals, out = work
    nt = _accumulate(
        r, k, b_ptr, b_idx, b_val, t_ptr, t_idx, t_val, s_p, s_m, s_a, s_b, x_ptr, x_w, x_c,
        pb_ptr, pb_idx, pb_val, pseq, ng_ptr, ng_idx, ng_val, acc, stamp, i + 1, touched, 0,
        track,
    )  # fmt: skip
    m = _emit(acc, touched, nt, n_cols, cols, vals, track)
    _values(m, cols, vals, idf, out, raw)
    return m


@nb.njit(parallel=True, **_NJ)
def design_rows(
    rows, k, n_cols, idf, data, indices, n_threads, raw, track,
    b_ptr, b_idx, b_val, t_ptr, t_idx, t_val,
    s_p, s_m, s_a, s_b, x_ptr, x_w, x_c, pb_ptr, pb_idx, pb_val, pseq,
    ng_ptr, ng_idx, ng_val,
):  # fmt: skip
    """The TF-IDF rows of ``rows`` (``ng`` already restricted to the vocabulary's
    columns), written into the CSR arrays ``data`` and ``indices`` (sorted indices), whose
    length ``nnz`` is the exact number of non-zeros (the vocabulary's document
    frequencies summed over these rows): with two
    or more threads the first half of the rows is written forward from the start and
    the second half backward from the end, so the arrays are allocated once and never
    copied. ``raw`` writes the counts themselves (as floats) instead. ``track`` notes
    each row's terms as they are touched (for rows with few of the columns); without it
    every row is read back densely. Returns ``(indptr, ok)``; ``ok`` is False if
    ``nnz`` was wrong (the arrays are then unusable)."""
    n = rows.size
    nnz = data.size
    starts = np.zeros(n + 1, dtype=np.int64)
    halves = 2 if (n_threads >= 2 and n >= 2) else 1
    mid = n // 2 if halves == 2 else n
    ends = np.zeros(2, dtype=np.int64)
    bad = np.zeros(2, dtype=np.int64)
    for h in nb.prange(halves):
        work = _scratch(n_cols, track)
        cols, out = work[3], work[5]
        forward = h == 0
        pos = 0 if forward else nnz
        for q in range(mid if forward else n - mid):
            i = q if forward else n - 1 - q
            m = _row(
                i, rows[i], k, n_cols, idf, raw, track, work, b_ptr, b_idx, b_val, t_ptr,
                t_idx, t_val, s_p, s_m, s_a, s_b, x_ptr, x_w, x_c, pb_ptr, pb_idx, pb_val, pseq,
                ng_ptr, ng_idx, ng_val,
            )  # fmt: skip
            if (forward and pos + m > nnz) or (not forward and pos - m < 0):
                bad[h] = 1
                break
            if not forward:
                pos -= m
            for e in range(m):
                data[pos + e] = out[e]
                indices[pos + e] = cols[e]
            starts[i] = pos
            if forward:
                pos += m
        ends[h] = pos
    ok = bad[0] == 0 and bad[1] == 0
    if halves == 2:
        ok = ok and ends[0] == ends[1]
    else:
        ok = ok and ends[0] == nnz
    starts[n] = nnz
    return starts, ok


@nb.njit(parallel=True, **_NJ)
def score_rows(
    rows, k, n_cols, idf, coef, intercept, n_threads, track,
    b_ptr, b_idx, b_val, t_ptr, t_idx, t_val,
    s_p, s_m, s_a, s_b, x_ptr, x_w, x_c, pb_ptr, pb_idx, pb_val, pseq,
    ng_ptr, ng_idx, ng_val,
):  # fmt: skip
    """Decision scores of ``rows``: each row's TF-IDF vector (``design_rows``'s values)
    dotted with ``coef`` in column order, plus ``intercept``; the rows' matrix is never
    built."""
    n = rows.size
    scores = np.empty(n, dtype=np.float64)
    chunk = (n + n_threads - 1) // n_threads
    for th in nb.prange(n_threads):
        work = _scratch(n_cols, track)
        cols, out = work[3], work[5]
        for i in range(th * chunk, min(n, th * chunk + chunk)):
            m = _row(
                i, rows[i], k, n_cols, idf, False, track, work, b_ptr, b_idx, b_val, t_ptr,
                t_idx, t_val, s_p, s_m, s_a, s_b, x_ptr, x_w, x_c, pb_ptr, pb_idx, pb_val, pseq,
                ng_ptr, ng_idx, ng_val,
            )  # fmt: skip
            t = 0.0
            for e in range(m):
                t += out[e] * coef[cols[e]]
            scores[i] = t + intercept
    return scores


# -- small helpers ---------------------------------------------------------------------


@nb.njit(parallel=True, **_NJ)
def restrict_columns(ptr, idx, val, colmap):
    """The columns of a CSR matrix that ``colmap`` maps to ``>= 0``, renumbered (each
    row's order kept), counted then copied by row chunks in parallel. Returns ``(ptr,
    idx, val)``."""
    n = ptr.size - 1
    n_chunks = 64
    step = (n + n_chunks - 1) // n_chunks
    counts = np.zeros(n + 1, dtype=np.int64)
    for ch in nb.prange(n_chunks):
        for i in range(ch * step, min(n, ch * step + step)):
            c = 0
            for e in range(np.uint64(ptr[i]), np.uint64(ptr[i + 1])):
                if colmap[np.uint64(idx[e])] >= 0:
                    c += 1
            counts[i + 1] = c
    out_ptr = np.cumsum(counts)
    out_idx = np.empty(out_ptr[n], dtype=np.int32)
    out_val = np.empty(out_ptr[n], dtype=val.dtype)
    for ch in nb.prange(n_chunks):
        for i in range(ch * step, min(n, ch * step + step)):
            pos = out_ptr[i]
            for e in range(np.uint64(ptr[i]), np.uint64(ptr[i + 1])):
                c = colmap[np.uint64(idx[e])]
                if c >= 0:
                    out_idx[pos] = c
                    out_val[pos] = val[e]
                    pos += 1
    return out_ptr, out_idx, out_val


@nb.njit(**_NJ)
def bag_rows(keys, n_rows, shift):
    """A sorted array of ``row << shift | id`` keys as CSR arrays (distinct ids with
    their counts per row). Returns ``(ptr, idx, val)``."""
    mask = (np.int64(1) << shift) - 1
    ptr = np.zeros(n_rows + 1, dtype=np.int64)
    idx = np.empty(keys.size, dtype=np.int32)
    val = np.empty(keys.size, dtype=np.int32)
    n = 0
    e = 0
    while e < keys.size:
        key = keys[e]
        f = e + 1
        while f < keys.size and keys[f] == key:
            f += 1
        idx[n] = key & mask
        val[n] = f - e
        ptr[(key >> shift) + 1] += 1
        n += 1
        e = f
    for r in range(n_rows):
        ptr[r + 1] += ptr[r]
    return ptr, idx[:n].copy(), val[:n].copy()


# -- the solver's products ---------------------------------------------------------------


@nb.njit(**_NJ)
def row_splits(ptr, n_threads):
    """Row ranges of about equal non-zeros, one per thread (``n_threads + 1`` bounds)."""
    n = ptr.size - 1
    out = np.zeros(n_threads + 1, dtype=np.int64)
    total = ptr[n]
    r = 0
    for th in range(1, n_threads):
        target = total * th // n_threads
        while r < n and ptr[r] < target:
            r += 1
        out[th] = r
    out[n_threads] = n
    return out


@nb.njit(**_NJ)
def column_splits(ptr, idx, n_cols, n_threads):
    """Column ranges of about equal non-zeros, one per thread, and for every row the
    first entry of each range (rows' indices are sorted): ``(bounds, at)`` with ``at``
    of shape ``(n_threads + 1, n_rows)``."""
    n = ptr.size - 1
    per_col = np.zeros(n_cols + 1, dtype=np.int64)
    for e in range(ptr[n]):
        per_col[idx[e] + 1] += 1
    for c in range(n_cols):
        per_col[c + 1] += per_col[c]
    bounds = np.zeros(n_threads + 1, dtype=np.int64)
    c = 0
    for th in range(1, n_threads):
        target = per_col[n_cols] * th // n_threads
        while c < n_cols and per_col[c] < target:
            c += 1
        bounds[th] = c
    bounds[n_threads] = n_cols
    at = np.zeros((n_threads + 1, n), dtype=np.int64)
    for i in range(n):
        a = ptr[i]
        b = ptr[i + 1]
        at[0, i] = a
        at[n_threads, i] = b
        e = a
        for th in range(1, n_threads):
            while e < b and idx[e] < bounds[th]:
                e += 1
            at[th, i] = e
    return bounds, at


@nb.njit(inline="always", **_NJ)
def _dot(data, idx, v, a, b):
    t = 0.0
    for k in range(a, b):
        t += data[k] * v[np.uint64(idx[k])]
    return t


@nb.njit(parallel=True, **_NJ)
def dots(data, idx, ptr, v, splits, out):
    """``out[i] = sum_k data[k] * v[idx[k]]`` over row ``i``'s entries in order (scipy's
    ``csr_matvec``), rows split between threads by ``splits``. Four rows are summed side
    by side: each sum still adds its own row's terms in order, but four independent
    chains of additions keep the processor busy (one chain waits on the adder)."""
    for th in nb.prange(splits.size - 1):
        i = splits[th]
        hi = splits[th + 1]
        while i + 3 < hi:
            a0 = np.uint64(ptr[i])
            a1 = np.uint64(ptr[i + 1])
            a2 = np.uint64(ptr[i + 2])
            a3 = np.uint64(ptr[i + 3])
            a4 = np.uint64(ptr[i + 4])
            n = min(a1 - a0, a2 - a1, a3 - a2, a4 - a3)
            t0 = 0.0
            t1 = 0.0
            t2 = 0.0
            t3 = 0.0
            for e in range(n):
                t0 += data[a0 + e] * v[np.uint64(idx[a0 + e])]
                t1 += data[a1 + e] * v[np.uint64(idx[a1 + e])]
                t2 += data[a2 + e] * v[np.uint64(idx[a2 + e])]
                t3 += data[a3 + e] * v[np.uint64(idx[a3 + e])]
            for e in range(a0 + n, a1):
                t0 += data[e] * v[np.uint64(idx[e])]
            for e in range(a1 + n, a2):
                t1 += data[e] * v[np.uint64(idx[e])]
            for e in range(a2 + n, a3):
                t2 += data[e] * v[np.uint64(idx[e])]
            for e in range(a3 + n, a4):
                t3 += data[e] * v[np.uint64(idx[e])]
            out[i] = t0
            out[i + 1] = t1
            out[i + 2] = t2
            out[i + 3] = t3
            i += 4
        while i < hi:
            out[i] = _dot(data, idx, v, np.uint64(ptr[i]), np.uint64(ptr[i + 1]))
            i += 1


@nb.njit(parallel=True, **_NJ)
def scatter(data, idx, w, at, out):
    """``out = x.T @ w``: for every column the sum over rows in row order (scipy's CSC
    ``csc_matvec`` on the transposed view), columns split between threads by ``at``
    (``column_splits``). A row's columns are distinct (sorted), so four of its entries
    are read before they are written back."""
    n_threads = at.shape[0] - 1
    n = at.shape[1]
    one = np.uint64(1)
    two = np.uint64(2)
    three = np.uint64(3)
    four = np.uint64(4)
    for j in range(out.size):
        out[j] = 0.0
    for th in nb.prange(n_threads):
        for i in range(n):
            wi = w[i]
            e = np.uint64(at[th, i])
            b = np.uint64(at[th + 1, i])
            while e + four <= b:
                j0 = np.uint64(idx[e])
                j1 = np.uint64(idx[e + one])
                j2 = np.uint64(idx[e + two])
                j3 = np.uint64(idx[e + three])
                x0 = out[j0] + data[e] * wi
                x1 = out[j1] + data[e + one] * wi
                x2 = out[j2] + data[e + two] * wi
                x3 = out[j3] + data[e + three] * wi
                out[j0] = x0
                out[j1] = x1
                out[j2] = x2
                out[j3] = x3
                e += four
            while e < b:
                j = np.uint64(idx[e])
                out[j] += data[e] * wi
                e += one


@nb.njit(**_NJ)
def lr_objective(y, z, c, f):
    """``f`` plus liblinear's logistic loss ``sum_i c_i * log(1 + exp(-y_i z_i))``, added
    row by row with the C library's ``exp`` and ``log`` (numpy's vectorized ones differ
    from them in the last bit on some processors, e.g. with AVX-512)."""
    for i in range(y.size):
        yz = y[i] * z[i]
        if yz >= 0:
            f += c[i] * math.log(1 + math.exp(-yz))
        else:
            f += c[i] * (-yz + math.log(1 + math.exp(yz)))
    return f


@nb.njit(**_NJ)
def lr_gradient_weights(y, z, c, d, wa):
    """liblinear's ``grad`` before its product: ``p = 1 / (1 + exp(-y z))``, the
    Hessian weights ``d = p (1 - p)`` and the gradient's row weights ``c (p - 1) y``."""
    for i in range(y.size):
        p = 1 / (1 + math.exp(-y[i] * z[i]))
        d[i] = p * (1 - p)
        wa[i] = c[i] * (p - 1) * y[i]


class Recipe:
    """The arrays of a recipe, in the kernels' argument order (see module docstring).

    ``bag``: rows x words CSR (int32 counts); ``terms``: rows x terms CSR of explicit
    term counts (may have no entries); the slot arrays are ``(n_rows, kmax)`` (``kmax``
    may be 0) with their explicit correction words, over the pool's bags and word
    sequence.
    """

    __slots__ = ("args", "kmax", "n_rows")

    def __init__(
        self,
        bag: tuple[np.ndarray, np.ndarray, np.ndarray],
        terms: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None,
        slots: tuple[np.ndarray, ...] | None = None,
        pool: tuple[np.ndarray, ...] | None = None,
    ) -> None:
        b_ptr, b_idx, b_val = bag
        n_rows = int(b_ptr.size - 1)
        if terms is None:
            terms = (np.zeros(n_rows + 1, np.int64), np.empty(0, np.int32), np.empty(0, np.int32))
        if slots is None:
            empty2 = np.empty((n_rows, 0), dtype=np.int32)
            empty64 = np.empty((n_rows, 0), dtype=np.int64)
            slots = (
                empty2,
                empty2,
                empty64,
                empty64,
                np.zeros(1, np.int64),
                np.empty(0, np.int32),
                np.empty(0, np.int32),
            )
        if pool is None:
            pool = (
                np.zeros(1, np.int64),
                np.empty(0, np.int32),
                np.empty(0, np.int32),
                np.empty(0, np.int32),
            )
        self.n_rows = n_rows
        self.kmax = int(slots[0].shape[1])
        self.args = (
            _c(b_ptr, np.int64),
            _c(b_idx, np.int32),
            _c(b_val, np.int32),
            _c(terms[0], np.int64),
            _c(terms[1], np.int32),
            _c(terms[2], np.int32),
            *(
                _c(a, t)
                for a, t in zip(
                    slots,
                    (np.int32, np.int32, np.int64, np.int64, np.int64, np.int32, np.int32),
                    strict=True,
                )
            ),
            *(
                _c(a, t)
                for a, t in zip(pool, (np.int64, np.int32, np.int32, np.int32), strict=True)
            ),
        )


def _c(a: np.ndarray, dtype: type) -> np.ndarray:
    return np.ascontiguousarray(a, dtype=dtype)

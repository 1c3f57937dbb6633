"""L2-regularized logistic regression solved by liblinear's trust-region Newton method,
on the caller's CSR matrix.

scikit-learn's ``LogisticRegression(solver="liblinear")`` hands its input to liblinear,
which first copies every non-zero into its own ``feature_node`` array (16 bytes each,
plus two per row for the bias and the terminator). With the design itself (12 bytes
per non-zero) that is 28 bytes per non-zero while a fit runs; the largest designs of the
audit (the full trace and the K=20 synthetic dilution point at scale 1, 120-170M
non-zeros) need 3.4-4.8 GB for the fit alone. This module runs the same algorithm
(liblinear's ``TRON`` with its ``l2r_lr_fun``: the same objective, gradient,
Hessian-vector product, conjugate-gradient inner loop, trust-region updates, stopping
rule and tolerance) directly on the CSR arrays, so a fit needs the design plus a few
vectors.

It repeats liblinear's floating-point operations in liblinear's order, so its
coefficients are bit-identical to scikit-learn's: liblinear trains on the rows grouped
by class (``class_grouped``; the audit builds its designs in that order, other input is
reordered once, a copy); row dot products and transposed products are compiled kernels
(``_kernels.dots`` and ``scatter``) that add in the same order as liblinear's loops and
scipy's sparse kernels, split between threads so that no sum changes order; the bias column
(``intercept_scaling``) is the last term of every row; sums over rows are sequential
(``cumsum``), not pairwise; vector operations use the BLAS routines scikit-learn's
liblinear wrapper calls (scipy's ``dnrm2``, ``ddot``, ``daxpy``, ``dscal``). Like
scikit-learn's, the last bits depend on the number of BLAS threads (OpenBLAS splits long
dot products); the audit runs its fits with one (``run_jobs``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from scipy.linalg import blas

__all__ = ["FitMatrix", "TronFit", "class_grouped", "fit_l2r_lr", "index_type"]

# TRON's constants (liblinear tron.cpp): step acceptance and trust-region updates
_ETA0, _ETA1, _ETA2 = 1e-4, 0.25, 0.75
_SIGMA1, _SIGMA2, _SIGMA3 = 0.25, 0.5, 4.0


def index_type(n_cols: int) -> type:
    """The narrowest column-index type for ``n_cols`` columns: 16 bits up to 65,536 (the
    seed's vocabularies are 30,000-60,000), else 32."""
    return np.uint16 if n_cols <= 1 << 16 else np.int32


class FitMatrix:
    """A CSR matrix whose column indices may be 16-bit (``index_type``): the fit's
    design, which the solver reads about a hundred times per fit, in 10 bytes per
    non-zero instead of 12. ``tocsr()`` gives the same matrix as a scipy CSR matrix."""

    __slots__ = ("data", "indices", "indptr", "shape")

    def __init__(
        self, data: np.ndarray, indices: np.ndarray, indptr: np.ndarray, shape: tuple[int, int]
    ) -> None:
        self.data = data
        self.indices = indices
        self.indptr = indptr
        self.shape = (int(shape[0]), int(shape[1]))

    @property
    def nnz(self) -> int:
        """Number of stored entries."""
        return int(self.data.size)

    def tocsr(self) -> sp.csr_matrix:
        """The matrix as scipy CSR (int32 indices: a copy of them; data shared)."""
        out = sp.csr_matrix(
            (self.data, self.indices.astype(np.int32), self.indptr), shape=self.shape
        )
        out.has_sorted_indices = True
        return out


@dataclass(frozen=True, slots=True)
class TronFit:
    """Coefficients (one per column), intercept, and the number of Newton iterations."""

    coef: np.ndarray
    intercept: float
    n_iter: int

    def decision_function(self, x: sp.csr_matrix) -> np.ndarray:
        """``x @ coef + intercept`` (what scikit-learn's ``decision_function`` computes)."""
        return np.asarray(x @ self.coef, dtype=np.float64) + self.intercept


def _seq_sum(values: np.ndarray, start: float = 0.0) -> float:
    """``start + values[0] + values[1] + ...`` added one at a time, as a C loop does
    (numpy's ``sum`` is pairwise and rounds differently)."""
    if values.size == 0:
        return start
    acc = np.cumsum(np.concatenate(([start], values)))
    return float(acc[-1])


class _Problem:
    """liblinear's ``l2r_lr_fun`` on a CSR matrix with a bias column of value ``bias``.

    The products run in ``threads`` threads (``_kernels.dots`` by rows, ``scatter`` by
    columns), each sum in liblinear's order, so the iterates do not depend on ``threads``.
    """

    def __init__(
        self,
        x: sp.csr_matrix | FitMatrix,
        y: np.ndarray,
        c: np.ndarray,
        bias: float,
        threads: int = 1,
    ) -> None:
        from toolaudit.leakage._kernels import column_splits, row_splits

        self.x = x
        self.data = np.ascontiguousarray(x.data, dtype=np.float64)
        idx_type = x.indices.dtype if x.indices.dtype in (np.uint16, np.int32) else np.int32
        self.idx = np.ascontiguousarray(x.indices, dtype=idx_type)
        self.ptr = np.ascontiguousarray(x.indptr, dtype=np.int64)
        threads = max(1, int(threads))
        self.rows = row_splits(self.ptr, threads)
        _, self.at = column_splits(self.ptr, self.idx, x.shape[1], threads)
        self.m = x.shape[1]
        self.y = y
        self.c = c
        self.bias = bias
        self.n = x.shape[1] + (1 if bias > 0 else 0)
        self.z = np.zeros(x.shape[0])
        self.d = np.zeros(x.shape[0])

    def xv(self, v: np.ndarray) -> np.ndarray:
        from toolaudit.leakage._kernels import dots, launch

        out = np.empty(self.x.shape[0])
        launch(
            dots, self.data, self.idx, self.ptr, np.ascontiguousarray(v[: self.m]), self.rows, out
        )
        if self.bias > 0:
            out = out + v[-1] * self.bias
        return out

    def xtv(self, v: np.ndarray) -> np.ndarray:
        from toolaudit.leakage._kernels import launch, scatter

        out = np.empty(self.n)
        launch(scatter, self.data, self.idx, np.ascontiguousarray(v), self.at, out[: self.m])
        if self.bias > 0:
            out[-1] = _seq_sum(v * self.bias)
        return out

    def fun(self, w: np.ndarray) -> float:
        from toolaudit.leakage._kernels import lr_objective

        self.z = self.xv(w)
        f = _seq_sum(w * w) / 2.0
        return float(lr_objective(self.y, self.z, self.c, f))

    def grad(self, w: np.ndarray) -> np.ndarray:
        from toolaudit.leakage._kernels import lr_gradient_weights

        self.d = np.empty_like(self.z)
        wa = np.empty_like(self.z)
        lr_gradient_weights(self.y, self.z, self.c, self.d, wa)
        g: np.ndarray = w + self.xtv(wa)
        return g

    def hv(self, s: np.ndarray) -> np.ndarray:
        wa = self.c * self.d * self.xv(s)
        hs: np.ndarray = s + self.xtv(wa)
        return hs


def _trcg(prob: _Problem, delta: float, g: np.ndarray) -> tuple[int, np.ndarray, np.ndarray]:
    """Steihaug's truncated conjugate gradient in the trust region (liblinear's trcg)."""
    n = g.size
    s = np.zeros(n)
    r = -g
    d = r.copy()
    cgtol = 0.1 * blas.dnrm2(g)
    cg_iter = 0
    rtr = blas.ddot(r, r)
    while True:
        if blas.dnrm2(r) <= cgtol:
            break
        cg_iter += 1
        hd = prob.hv(d)
        alpha = rtr / blas.ddot(d, hd)
        s = blas.daxpy(d, s, a=alpha)
        if blas.dnrm2(s) > delta:
            s = blas.daxpy(d, s, a=-alpha)
            std = blas.ddot(s, d)
            sts = blas.ddot(s, s)
            dtd = blas.ddot(d, d)
            dsq = delta * delta
            rad = np.sqrt(std * std + dtd * (dsq - sts))
            alpha = (dsq - sts) / (std + rad) if std >= 0 else (rad - std) / dtd
            s = blas.daxpy(d, s, a=alpha)
            r = blas.daxpy(hd, r, a=-alpha)
            break
        r = blas.daxpy(hd, r, a=-alpha)
        rnew = blas.ddot(r, r)
        beta = rnew / rtr
        d = blas.dscal(beta, d)
        d = blas.daxpy(r, d, a=1.0)
        rtr = rnew
    return cg_iter, s, r


def _tron(
    prob: _Problem, eps: float, max_iter: int, w0: np.ndarray | None = None
) -> tuple[np.ndarray, int]:
    w = np.zeros(prob.n)
    f = prob.fun(w)
    g = prob.grad(w)
    delta = blas.dnrm2(g)
    gnorm1 = delta  # the stopping rule is relative to the gradient at w = 0
    if w0 is not None:  # a warm start: same rule, first step from w0
        w = np.array(w0, dtype=np.float64)
        f = prob.fun(w)
        g = prob.grad(w)
        delta = blas.dnrm2(g)
    gnorm = delta
    search = gnorm > eps * gnorm1
    it = 1
    while it <= max_iter and search:
        _, s, r = _trcg(prob, delta, g)
        w_new = blas.daxpy(s, w.copy(), a=1.0)
        gs = blas.ddot(g, s)
        prered = -0.5 * (gs - blas.ddot(s, r))
        fnew = prob.fun(w_new)
        actred = f - fnew
        snorm = blas.dnrm2(s)
        if it == 1:
            delta = min(delta, snorm)
        if fnew - f - gs <= 0:
            alpha = _SIGMA3
        else:
            alpha = max(_SIGMA1, -0.5 * (gs / (fnew - f - gs)))
        if actred < _ETA0 * prered:
            delta = min(max(alpha, _SIGMA1) * snorm, _SIGMA2 * delta)
        elif actred < _ETA1 * prered:
            delta = max(_SIGMA1 * delta, min(alpha * snorm, _SIGMA2 * delta))
        elif actred < _ETA2 * prered:
            delta = max(_SIGMA1 * delta, min(alpha * snorm, _SIGMA3 * delta))
        else:
            delta = max(delta, min(alpha * snorm, _SIGMA3 * delta))
        if actred > _ETA0 * prered:
            it += 1
            w = w_new
            f = fnew
            g = prob.grad(w)
            gnorm = blas.dnrm2(g)
            if gnorm <= eps * gnorm1:
                break
        # a rejected step leaves D (the Hessian's weights) at w, as liblinear does; z is
        # recomputed by the next ``fun`` before ``grad`` reads it
        if f < -1.0e32:
            break
        if abs(actred) <= 0 and prered <= 0:
            break
        if abs(actred) <= 1.0e-12 * abs(f) and abs(prered) <= 1.0e-12 * abs(f):
            break
    return w, it - 1


def class_grouped(rows: np.ndarray, y: np.ndarray) -> np.ndarray:
    """``rows`` in the order liblinear trains on them: every row labelled with the
    smaller label first, then the others, each group in its original order. A design
    built over rows in this order is fitted without a copy (``fit_l2r_lr``); TF-IDF
    vocabulary and idf do not depend on the order of the rows."""
    rows = np.asarray(rows)
    return rows[np.argsort(np.asarray(y)[rows], kind="stable")]


def fit_l2r_lr(
    x: sp.csr_matrix | FitMatrix,
    y: np.ndarray,
    *,
    C: float = 1.0,
    class_weight: str | None = "balanced",
    max_iter: int = 100,
    tol: float = 1e-4,
    intercept_scaling: float = 1.0,
    warm: tuple[np.ndarray, float] | None = None,
    threads: int = 1,
) -> TronFit:
    """What ``LogisticRegression(solver="liblinear", C=C, class_weight=class_weight,
    max_iter=max_iter, tol=tol)`` fits on ``(x, y)`` (two classes; the larger label is
    the positive one), without copying ``x``.

    ``x`` should be CSR with float64 values, sorted indices, and its rows grouped by
    class (``class_grouped``), as the audit's designs are: then it is not copied.
    Anything else is converted or reordered once (a copy), to the same result.
    ``threads`` runs the matrix products in that many threads, with the same result.

    ``warm = (coef, intercept)`` starts TRON there instead of at 0 (same stopping rule,
    relative to the gradient at 0, as liblinear's own warm start). scikit-learn's
    liblinear has no warm start, so such a fit is not scikit-learn's: it is for
    measuring what warm starts would save (``benchmarks/warm_start.py``), not used by
    the audit.
    """
    if not isinstance(x, FitMatrix):
        x = sp.csr_matrix(x)
        if x.dtype != np.float64:
            x = x.astype(np.float64)
        if not x.has_sorted_indices:
            x = x.sorted_indices()
    classes, y_ind = np.unique(np.asarray(y), return_inverse=True)
    if classes.size != 2:
        raise ValueError(f"two classes are needed, got {classes.size}")
    if class_weight == "balanced":
        weight = y_ind.size / (2 * np.bincount(y_ind).astype(np.float64))
    elif class_weight is None:
        weight = np.ones(2)
    else:
        raise ValueError(f"class_weight={class_weight!r} is not supported here")
    # liblinear trains on the rows grouped by class (every row of the first class, then
    # the second, each in its original order), so its sums over rows run in that order;
    # rows not already in that order are taken in it here (a copy of x)
    order = np.argsort(y_ind, kind="stable")
    if np.any(np.diff(y_ind) < 0):
        x = (x.tocsr() if isinstance(x, FitMatrix) else x)[order]
        y_ind = y_ind[order]
    # liblinear's labels: +1 for the positive (second) class; C per row from its class
    sign = np.where(y_ind == 1, 1.0, -1.0)
    c = np.where(y_ind == 1, C * weight[1], C * weight[0])
    pos = int((y_ind == 1).sum())
    neg = y_ind.size - pos
    eps = tol * max(min(pos, neg), 1) / y_ind.size
    prob = _Problem(x, sign, c, intercept_scaling, threads)
    w0 = None
    if warm is not None:
        w0 = np.append(np.asarray(warm[0], dtype=np.float64), warm[1] / intercept_scaling)
    w, n_iter = _tron(prob, eps, max_iter, w0)
    coef = w[: x.shape[1]].copy()
    intercept = float(intercept_scaling * w[-1]) if intercept_scaling > 0 else 0.0
    return TronFit(coef, intercept, n_iter)

"""Presence control: the diagnostic classifier on *which* tools were called, not on text.

Features per example: for every tool name, whether it was called (0/1) and how many of
its results the example holds. The classifier, partition and folds are the audit's own,
so its AUROC compares directly with the full trace's. When it explains the full-trace
signal, the outcome is readable from the actions taken, not from a returned value.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from toolaudit.leakage._engine import ToolColumns
from toolaudit.leakage._features import LRSpec, fit_and_score
from toolaudit.leakage._partition import Partition

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class PresenceScores:
    """Out-of-partition scores of the presence control, or why it was skipped."""

    scores: np.ndarray | None
    n_features: int
    skipped: str | None = None


def presence_matrix(columns: ToolColumns, n_rows: int) -> tuple[np.ndarray, list[str]]:
    """``(n_rows, 2 * tools)`` matrix of presence flags and call counts, with names."""
    calls = columns.calls or {}
    names: list[str] = []
    cols: list[np.ndarray] = []
    for tool in columns.order:
        c = calls.get(tool, np.zeros(n_rows, dtype=np.int32)).astype(np.float64)
        cols += [(c > 0).astype(np.float64), c]
        names += [f"called:{tool}", f"calls:{tool}"]
    mat = np.column_stack(cols) if cols else np.zeros((n_rows, 0))
    return mat, names


def presence_scores(
    columns: ToolColumns, part: Partition, y: np.ndarray, lr: LRSpec
) -> PresenceScores:
    """Fit the presence control on each fold's fit rows and score its eval rows."""
    x, _ = presence_matrix(columns, y.size)
    rows = part.fit_rows
    varying = x[rows].std(axis=0) > 0 if rows.size else np.zeros(x.shape[1], dtype=bool)
    if not varying.any():
        return PresenceScores(
            None,
            0,
            "every example calls the same tools the same number of times, so which "
            "actions were taken cannot predict anything",
        )
    x = x[:, varying]
    scores = np.full(y.size, np.nan)
    for fit, ev in part.folds:
        if ev.size == 0 or np.unique(y[fit]).size < 2:
            continue
        out = fit_and_score(sp.csr_matrix(x[fit]), y[fit], sp.csr_matrix(x[ev]), lr)
        scores[ev] = out.scores
    return PresenceScores(scores, int(varying.sum()))

"""AUROC summaries shared by the scope table, the prefix lookup and the dilution sweeps."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from sklearn.metrics import roc_curve

from toolaudit.stats import auroc, bootstrap_auroc

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class AurocSummary:
    """AUROC with its stratified bootstrap interval, overall and per group.

    A group (or the whole evaluation partition) with one class only has an undefined
    AUROC (NaN in memory, null in JSON).
    """

    auroc: float
    ci95: tuple[float, float]
    n: int
    n_pos: int
    by_group: dict[str, dict[str, Any]]

    def as_json(self) -> dict[str, Any]:
        """``auroc``, ``ci95``, ``n``, ``n_pos`` and ``by_group``."""
        return {
            "auroc": self.auroc,
            "ci95": list(self.ci95),
            "n": self.n,
            "n_pos": self.n_pos,
            "by_group": self.by_group,
        }


def summarize(
    y: np.ndarray,
    scores: np.ndarray,
    groups: Sequence[str],
    *,
    n_boot: int,
    seed: int,
    group_ci: bool = True,
) -> AurocSummary:
    """AUROC of ``scores`` against ``y`` overall and within each group."""
    y = np.asarray(y).astype(int)
    scores = np.asarray(scores, dtype=float)
    ok = ~np.isnan(scores)
    iv = bootstrap_auroc(y[ok], scores[ok], n_boot=n_boot, seed=seed)
    by_group: dict[str, dict[str, Any]] = {}
    garr = np.asarray(groups)
    for g in sorted(set(groups)):
        m = (garr == g) & ok
        yy = y[m]
        entry: dict[str, Any] = {"n": int(m.sum()), "n_pos": int(yy.sum())}
        if group_ci:
            giv = bootstrap_auroc(yy, scores[m], n_boot=n_boot, seed=seed)
            entry.update(auroc=giv.estimate, ci95=[giv.low, giv.high])
        else:
            entry.update(auroc=auroc(yy, scores[m]), ci95=[float("nan"), float("nan")])
        by_group[g] = entry
    return AurocSummary(iv.estimate, (iv.low, iv.high), int(ok.sum()), int(y[ok].sum()), by_group)


def one_class_groups(y: np.ndarray, groups: Sequence[str]) -> list[str]:
    """Groups whose rows all carry the same label (their AUROC is undefined)."""
    garr = np.asarray(groups)
    y = np.asarray(y)
    return [g for g in sorted(set(groups)) if np.unique(y[garr == g]).size < 2]


def roc_curves(
    y: np.ndarray, curves: Sequence[tuple[str, np.ndarray]], *, max_points: int = 200
) -> list[dict[str, Any]]:
    """Downsampled ROC curves (``fpr``, ``tpr``) of each ``(scope, scores)``."""
    out = []
    for scope, scores in curves:
        ok = ~np.isnan(scores)
        if np.unique(y[ok]).size < 2:
            continue
        fpr, tpr, _ = roc_curve(y[ok], scores[ok])
        if fpr.size > max_points:
            keep = np.unique(np.linspace(0, fpr.size - 1, max_points).round().astype(int))
            fpr, tpr = fpr[keep], tpr[keep]
        out.append({"scope": scope, "fpr": fpr.round(6).tolist(), "tpr": tpr.round(6).tolist()})
    return out

"""Audit partitions: fit/eval selections by split or group, or grouped cross-validation.

A selection is written ``split=train`` or ``group=C1,C2`` (one field, comma-separated
values). With splits ``train`` and ``test`` present and no selection given, the seed's
protocol applies: fit on ``train``, evaluate on ``test``. With a single pool (no splits)
the audit uses grouped K-fold cross-validation: whole groups are held out together,
never a random row split.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from toolaudit.errors import ConfigError, DataError
from toolaudit.traces import Example

logger = logging.getLogger(__name__)

_FIELDS = ("split", "group")


@dataclass(frozen=True, slots=True)
class Selection:
    """Rows whose ``field`` (split or group) takes one of ``values``."""

    field: str
    values: tuple[str, ...]

    @classmethod
    def parse(cls, text: str, *, option: str) -> Selection:
        """Parse ``split=train`` / ``group=C1,C2``."""
        name, sep, rest = text.partition("=")
        values = tuple(v.strip() for v in rest.split(",") if v.strip())
        if not sep or name.strip() not in _FIELDS or not values:
            raise ConfigError.invalid(option, "split=V[,V...] or group=V[,V...]", text)
        return cls(name.strip(), values)

    def mask(self, examples: Sequence[Example]) -> np.ndarray:
        """Boolean mask of the selected rows."""
        wanted = set(self.values)
        return np.array([getattr(e, self.field) in wanted for e in examples], dtype=bool)

    def __str__(self) -> str:
        return f"{self.field}={','.join(self.values)}"


@dataclass(frozen=True, slots=True)
class Partition:
    """Fit/eval folds over row indices. ``holdout`` has one fold; ``grouped_cv`` has K
    folds whose eval parts tile the pool."""

    mode: str
    folds: tuple[tuple[np.ndarray, np.ndarray], ...]
    description: str

    @property
    def eval_rows(self) -> np.ndarray:
        """Every evaluated row, in fold order."""
        return np.concatenate([ev for _, ev in self.folds])

    @property
    def fit_rows(self) -> np.ndarray:
        """Every row used for fitting in some fold (sorted, unique)."""
        return np.unique(np.concatenate([fit for fit, _ in self.folds]))

    def as_json(self) -> dict[str, object]:
        """A summary for the results file."""
        return {
            "mode": self.mode,
            "description": self.description,
            "folds": len(self.folds),
            "n_fit": [int(f.size) for f, _ in self.folds],
            "n_eval": [int(e.size) for _, e in self.folds],
        }


def grouped_folds(groups: Sequence[str], n_folds: int) -> list[np.ndarray]:
    """Eval row sets of grouped K-fold: groups, largest first, go to the lightest fold
    (ties by group name), so the assignment is deterministic and needs no seed. More
    folds than groups is refused (never silently capped)."""
    names, inverse, sizes = np.unique(np.asarray(groups), return_inverse=True, return_counts=True)
    if names.size < 2:
        raise DataError(
            f"grouped cross-validation needs at least 2 groups; the data has {names.size}"
        )
    if n_folds > names.size:
        raise ConfigError(
            f"cv_folds {n_folds} is more than the data's {names.size} groups (grouped "
            f"cross-validation holds out whole groups); use --cv-folds {names.size} or fewer"
        )
    k = n_folds
    load = np.zeros(k, dtype=np.int64)
    fold_of = np.zeros(names.size, dtype=np.int64)
    for g in sorted(range(names.size), key=lambda i: (-sizes[i], names[i])):
        f = int(np.argmin(load))
        fold_of[g] = f
        load[f] += sizes[g]
    row_fold = fold_of[inverse.ravel()]
    return [np.flatnonzero(row_fold == f) for f in range(k)]


def make_partition(
    examples: Sequence[Example],
    *,
    fit: str | None = None,
    eval: str | None = None,
    cv_folds: int = 5,
) -> Partition:
    """The partition for ``examples`` (see the module docstring)."""
    n = len(examples)
    splits = {e.split for e in examples}
    if fit is None and eval is None and {"train", "test"} <= splits:
        fit, eval = "split=train", "split=test"
    if fit is None and eval is None:
        folds = grouped_folds([e.group for e in examples], cv_folds)
        everything = np.arange(n)
        pairs = tuple((np.setdiff1d(everything, ev), ev) for ev in folds)
        return Partition("grouped_cv", pairs, f"grouped {len(folds)}-fold cross-validation")
    fit_mask = Selection.parse(fit, option="fit").mask(examples) if fit else None
    eval_mask = Selection.parse(eval, option="eval").mask(examples) if eval else None
    if fit_mask is None:
        assert eval_mask is not None
        fit_mask = ~eval_mask
    if eval_mask is None:
        eval_mask = ~fit_mask
    overlap = int((fit_mask & eval_mask).sum())
    if overlap:
        logger.warning("%d row(s) are in both the fit and the eval partition", overlap)
    fit_rows, eval_rows = np.flatnonzero(fit_mask), np.flatnonzero(eval_mask)
    for name, rows, text in (("fit", fit_rows, fit), ("eval", eval_rows, eval)):
        if rows.size == 0:
            raise DataError(f"the {name} partition ({text or 'the rest'}) selects no examples")
    desc = f"fit {fit or 'rest'} ({fit_rows.size}), evaluate {eval or 'rest'} ({eval_rows.size})"
    return Partition("holdout", ((fit_rows, eval_rows),), desc)

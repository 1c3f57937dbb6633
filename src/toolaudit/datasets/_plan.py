"""The count plan of the controlled TCR shortcut benchmark (the seed's Table 2) and its scaling."""

from __future__ import annotations

from dataclasses import dataclass

from toolaudit.errors import ConfigError

__all__ = ["MAX_SCALE", "TCR_TABLE2", "Cell", "plan_counts", "validate_scale"]


@dataclass(frozen=True, slots=True)
class Cell:
    """One (group, split) cell of the benchmark with its example and positive counts."""

    group: str
    split: str
    total: int
    positives: int

    @property
    def negatives(self) -> int:
        """Examples with label 0."""
        return self.total - self.positives


# Table 2 of seeds/leakage-audit-pt2d-redaction.txt: cluster 0 supplies train and
# validation, peptide-disjoint clusters 1-5 form the test set (4,898 rows, 264 positive).
TCR_TABLE2: tuple[Cell, ...] = (
    Cell("C0", "train", 12_940, 3_483),
    Cell("C0", "val", 1_438, 397),
    Cell("C1", "test", 1_004, 45),
    Cell("C2", "test", 994, 38),
    Cell("C3", "test", 968, 30),
    Cell("C4", "test", 968, 109),
    Cell("C5", "test", 964, 42),
)

# Every scaled cell keeps at least this many examples of each class.
MIN_PER_CLASS = 2

# The largest scale: up to four times the seed's counts (e.g. ``--scale 2`` to test the
# audits' memory and speed beyond the seed's own size).
MAX_SCALE = 4.0
_ALLOWED = f"a number in (0, {MAX_SCALE:g}]"


def validate_scale(scale: float) -> float:
    """Return ``scale`` as a float, or raise ConfigError unless ``0 < scale <= MAX_SCALE``."""
    try:
        value = float(scale)
    except (TypeError, ValueError):
        raise ConfigError.invalid("scale", _ALLOWED, scale) from None
    if not (0.0 < value <= MAX_SCALE):  # also rejects NaN and infinities
        raise ConfigError.invalid("scale", _ALLOWED, scale)
    return value


def _scaled(count: int, scale: float) -> int:
    # Round half up so the result does not depend on banker's rounding of exact halves.
    return int(count * scale + 0.5)


def plan_counts(*, scale: float = 1.0) -> list[Cell]:
    """The benchmark's cells with counts scaled by ``scale`` (``0 < scale <= MAX_SCALE``).

    Positives and negatives are scaled separately and rounded, then each is raised to
    at least two, so every cluster and split keeps both classes. At ``scale=1`` the counts
    are exactly the seed's Table 2; at ``scale=2`` every count is doubled.

    Example:
        >>> [(c.group, c.split, c.total, c.positives) for c in plan_counts(scale=0.01)][:2]
        [('C0', 'train', 130, 35), ('C0', 'val', 14, 4)]
    """
    value = validate_scale(scale)
    cells = []
    for cell in TCR_TABLE2:
        pos = max(MIN_PER_CLASS, _scaled(cell.positives, value))
        neg = max(MIN_PER_CLASS, _scaled(cell.negatives, value))
        cells.append(Cell(cell.group, cell.split, pos + neg, pos))
    return cells

"""Prefix lookup (seed Table 6): a token class's first k characters as a score.

On the fit partition we learn, for each k-character prefix of the class value, the
positive rate; the evaluation rows are scored with the rate of their prefix (the fit
partition's overall rate for a prefix never seen there, and for rows without a value).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from toolaudit.errors import ConfigError
from toolaudit.leakage._engine import PT2DEngine
from toolaudit.leakage._partition import Partition
from toolaudit.leakage._provenance import TokenClass, captures
from toolaudit.leakage._scoring import summarize

if TYPE_CHECKING:
    from toolaudit.leakage._config import LeakageConfig


def prefix_scores(
    values: Sequence[str | None], y: np.ndarray, fit: np.ndarray, ev: np.ndarray, k: int
) -> np.ndarray:
    """Scores of ``ev`` rows from the prefix -> positive-rate table learnt on ``fit``."""
    base = float(np.mean(y[fit])) if fit.size else 0.5
    sums: dict[str, list[int]] = {}
    for i in fit:
        v = values[i]
        if v is None:
            continue
        acc = sums.setdefault(v[:k], [0, 0])
        acc[0] += int(y[i])
        acc[1] += 1
    rate = {p: s / n for p, (s, n) in sums.items()}
    return np.array(
        [rate.get(values[i][:k], base) if values[i] is not None else base for i in ev],  # type: ignore[index]
        dtype=float,
    )


def _choose(classes: Sequence[TokenClass], wanted: str | None) -> tuple[str, str, str]:
    """(name, pattern, tool) of the class to test; ``wanted`` is a class name or a regex
    with one capture group (then searched in every tool)."""
    if wanted is None:
        best = classes[0]
        return best.name, best.pattern, best.tools[0]
    for c in classes:
        if c.name == wanted:
            return c.name, c.pattern, c.tools[0]
    try:
        rx = re.compile(wanted)
    except re.error as exc:
        raise ConfigError.invalid("prefix_class", "a class name or a regex", wanted) from exc
    if rx.groups != 1:
        raise ConfigError.invalid("prefix_class", "a regex with exactly one group", wanted)
    return wanted, wanted, "*"


def prefix_lookup(
    engine: PT2DEngine,
    classes: Sequence[TokenClass],
    part: Partition,
    y: np.ndarray,
    groups: Sequence[str],
    cfg: LeakageConfig,
    warnings: list[str],
    *,
    wanted: str | None = None,
    scores_out: dict[int, np.ndarray] | None = None,
) -> dict[str, Any] | None:
    """AUROC of the prefix lookup for k in ``cfg.prefix_lengths``, overall and per group.

    ``wanted`` (else ``cfg.prefix_class``, else the top class) names the class;
    ``scores_out`` receives each k's evaluation scores (rows in ``part.eval_rows``).
    """
    wanted = wanted or cfg.prefix_class
    if not classes and wanted is None:
        return None
    name, pattern, tool = _choose(classes, wanted)
    texts = engine.columns.texts
    if tool == "*":
        per_tool = [captures(pattern, texts[t]) for t in engine.tools]
        values = [next((v[i] for v in per_tool if v[i] is not None), None) for i in range(len(y))]
    else:
        values = captures(pattern, texts[tool])
    missing = sum(v is None for v in values)
    if missing:
        warnings.append(f"prefix lookup: class {name!r} has no value in {missing} example(s)")
    ev_all = part.eval_rows
    rows = []
    for k in cfg.prefix_lengths:
        scores = np.full(len(y), np.nan)
        for fit, ev in part.folds:
            scores[ev] = prefix_scores(values, y, fit, ev, k)
        summ = summarize(
            y[ev_all], scores[ev_all], [groups[i] for i in ev_all], n_boot=cfg.n_boot, seed=cfg.seed
        )
        rows.append({"chars": k, **summ.as_json()})
        if scores_out is not None:
            scores_out[k] = scores[ev_all]
    return {"class": name, "pattern": pattern, "tool": tool, "rows": rows}


def prefix_choice(
    classes: Sequence[TokenClass], carrier: str, n_rows: int
) -> tuple[str | None, str | None]:
    """(class name, None) for the prefix lookup, or (None, reason) when it is skipped.

    A class qualifies when its value is present in most examples and it is linked to the
    carrier (found in the carrier's text, or repeating the values of a carrier class).
    """
    if not classes:
        return None, "no candidate token class was found"
    carrier_classes = {c.name for c in classes if carrier in c.tools}
    reasons = []
    for c in classes:
        linked = carrier in c.tools or bool(carrier_classes & set(c.same_values_as))
        most = c.support * 2 > n_rows
        if linked and most:
            return c.name, None
        why = []
        if not most:
            why.append(f"present in {c.support} of {n_rows} examples")
        if not linked:
            why.append(f"not linked to the carrier {carrier}")
        reasons.append(f"{c.name} ({'; '.join(why)})")
    shown = ", ".join(reasons[:3]) + (f" and {len(reasons) - 3} more" if len(reasons) > 3 else "")
    return None, (
        "no token class is both present in most examples and linked to the carrier "
        f"{carrier}: {shown}"
    )

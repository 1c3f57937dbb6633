"""Findings, fallbacks and result metadata: the typed vocabulary every audit reports in.

A report sentence that states a conclusion is a function of a :class:`Finding` (value,
interval, test, verdict), never a literal: change the finding and the sentence changes.
Every substitution or relaxation an audit makes (a stand-in domain, truncation, a relaxed
``min_df``, an empty pool, a skipped part, a simulated component) is a :class:`Fallback`
recorded in ``meta.fallbacks`` and shown in the report.

Example:
    >>> f = Finding(name="leakage.verdict", verdict="localized", value=0.64,
    ...             interval=(0.60, 0.67), subject="thermompnn_ddg")
    >>> f.interval_excludes(0.5)
    True
"""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

logger = logging.getLogger(__name__)

RESULTS_SCHEMA_VERSION = 1

FallbackKind = Literal[
    "stand_in_data",
    "stand_in_policy",
    "truncation",
    "relaxed_parameter",
    "empty_pool",
    "skipped_part",
    "simulated_component",
    "other",
]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Finding(_Model):
    """One computed conclusion: what was measured, how sure, and what it means.

    Attributes:
        name: a stable dotted id (``leakage.verdict``, ``probe.careful.tool_rename``).
        verdict: the categorical reading (``localized``, ``equivalent``, ``rises``...).
        value: the point estimate the verdict rests on, if any.
        interval: its interval (``level`` says which), if any.
        level: the interval's coverage, e.g. 0.95 or 0.90.
        test: the test that decided the verdict (``sign test``, ``TOST ±0.10``...).
        p_value: that test's p-value, if any.
        n: the sample size behind the value.
        subject: what the finding is about (a tool, a policy, an arm).
        details: any further numbers a sentence needs (counts, thresholds).
    """

    name: str
    verdict: str
    value: float | None = None
    interval: tuple[float | None, float | None] | None = None
    level: float | None = None
    test: str | None = None
    p_value: float | None = None
    n: int | None = None
    subject: str | None = None
    details: dict[str, Any] = Field(default_factory=dict)

    def interval_excludes(self, x: float) -> bool:
        """True when the interval lies wholly above or wholly below ``x``."""
        if self.interval is None or None in self.interval:
            return False
        lo, hi = self.interval
        assert lo is not None and hi is not None
        return lo > x or hi < x


def interval_label(finding: Finding) -> str:
    """What the finding's interval is, as the report names it: ``95% interval``, or
    ``family-wise 95% interval`` when ``details["family_wise"]`` says that the level
    holds jointly over several intervals (each one then wider than a 95% interval)."""
    if not finding.level:
        return ""
    joint = "family-wise " if finding.details.get("family_wise") else ""
    return f"{joint}{finding.level:.0%} interval"


def interval_bounded(iv: Sequence[float | None] | None) -> bool:
    """True when an interval has two numeric bounds; a bootstrap over one cluster gives
    None or NaN bounds (not estimable).

    Example:
        >>> interval_bounded((0.1, 0.2)), interval_bounded((None, None)), interval_bounded(None)
        (True, False, False)
    """
    return iv is not None and all(
        x is not None and not (isinstance(x, float) and math.isnan(x)) for x in iv
    )


def _num(x: Any) -> str:
    if isinstance(x, bool) or not isinstance(x, int | float):
        return "undefined" if x is None else str(x)
    return f"{x:.3f}" if isinstance(x, float) else str(x)


def headline_sentence(title: str, finding: Finding | None, *, note: str | None = None) -> str:
    """One first-screen verdict line for an audit, rendered from its headline finding.

    ``None`` (the audit states no verdict at this size) gives a line saying so, with
    ``note`` (e.g. the part's status and fallback count) appended.

    Example:
        >>> f = Finding(name="x", verdict="localized", value=0.64, interval=(0.6, 0.67),
        ...             level=0.95, subject="tool 3", details={"metric": "AUROC"})
        >>> headline_sentence("Leakage", f)
        'Leakage: localized — tool 3: AUROC 0.640 [0.600, 0.670] (95% interval)'
    """
    if finding is None:
        return f"{title}: no verdict stated at this size" + (f" ({note})" if note else "")
    text = f"{title}: {finding.verdict}"
    what = []
    if finding.value is not None:
        metric = str(finding.details.get("metric", "value"))
        what.append(f"{metric} {_num(finding.value)}")
        if finding.interval is not None and not interval_bounded(finding.interval):
            what[-1] += " (interval not estimable)"
        elif finding.interval is not None:
            lo, hi = finding.interval
            label = interval_label(finding)
            level = f" ({label})" if label else ""
            what[-1] += f" [{_num(lo)}, {_num(hi)}]{level}"
    if finding.details.get("versus"):
        what.append(f"vs {finding.details['versus']}")
    if finding.p_value is not None:
        what.append(f"{finding.test or 'test'} p = {finding.p_value:.3g}")
    if finding.n is not None:
        what.append(f"n = {finding.n}")
    if finding.subject:
        text += f" — {finding.subject}"
        if what:
            text += ":"
    elif what:
        text += " —"
    return text + (" " + ", ".join(what) if what else "") + (f" ({note})" if note else "")


class Fallback(_Model):
    """One substitution or relaxation made during a run; never silent.

    Attributes:
        kind: the family (stand-in data, truncation, relaxed parameter...).
        what: the component concerned (``faults.domain``, ``leakage.min_df``...).
        detail: one sentence saying what was used instead, and why.
        count: how many items it affected, when countable.
    """

    kind: FallbackKind
    what: str
    detail: str
    count: int | None = None

    def sentence(self) -> str:
        """The note shown in the report."""
        suffix = f" ({self.count} affected)" if self.count is not None else ""
        return f"Fallback [{self.kind}] {self.what}: {self.detail}{suffix}"


class ResultMeta(_Model):
    """The ``meta`` block of every results file: enough to reproduce the run exactly.

    Deliberately no timestamps or host names, so the same command with the same seed
    writes byte-identical files. Keys an audit adds to its ``meta`` load as extras.
    """

    model_config = ConfigDict(extra="allow", frozen=True)

    schema_version: int = RESULTS_SCHEMA_VERSION
    command: str
    seed: int | None = None
    config: dict[str, Any] = Field(default_factory=dict)
    versions: dict[str, str] = Field(default_factory=dict)
    fallbacks: list[Fallback] = Field(default_factory=list)


def record_fallback(fallbacks: list[Fallback], fallback: Fallback) -> Fallback:
    """Append ``fallback`` to a run's list and log it as a warning (the CLI shows warnings)."""
    fallbacks.append(fallback)
    logger.warning("%s", fallback.sentence())
    return fallback

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

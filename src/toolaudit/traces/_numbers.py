"""Numbers read from data files: integers too long for Python, and the one check every
reward or score passes wherever it is read (trace readers and study records alike).

Python refuses to convert an integer literal of more than 4,300 digits
(``sys.get_int_max_str_digits``), so ``json.loads`` of a reward written with 5,000 digits
raises a bare ValueError naming neither file nor field. The JSON readers parse integers
with :func:`parse_int` instead, which keeps such a literal as a :class:`HugeNumber`, and
the field checks then refuse it by name like any other absurd value.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from toolaudit.errors import TraceFormatError

#: The largest magnitude a reward or score may have. Every suite's scores are small
#: numbers (rewards in [0, 1], proxy rewards of a few points); a value beyond this is a
#: corrupted record, not a score.
MAX_SCORE = 1e6


class HugeNumber(float):
    """An integer literal longer than Python converts: ±inf as a number, so it is never
    mistaken for a finite value, and shown by its length in messages."""

    digits: int

    def __new__(cls, text: str) -> HugeNumber:
        value = super().__new__(cls, "-inf" if text.startswith("-") else "inf")
        value.digits = len(text.lstrip("-"))
        return value

    def __repr__(self) -> str:
        return f"a {self.digits:,}-digit integer"

    __str__ = __repr__

    def __format__(self, spec: str) -> str:
        return repr(self)


def parse_int(text: str) -> int | HugeNumber:
    """``int(text)``, or a :class:`HugeNumber` when ``text`` is beyond Python's limit on
    integer-string conversion (``json.loads(..., parse_int=parse_int)``)."""
    try:
        return int(text)
    except ValueError:
        return HugeNumber(text)


def check_score(value: Any, *, path: str | Path, line: int | None, field: str) -> None:
    """TraceFormatError naming the file, line and field unless ``value`` is null or a
    finite number of magnitude at most :data:`MAX_SCORE`."""
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TraceFormatError(path, line, field, f"expected a number, got {value!r}")
    if not math.isfinite(value) and not isinstance(value, HugeNumber):
        raise TraceFormatError(path, line, field, f"{value} is not a finite number")
    if abs(value) > MAX_SCORE:
        raise TraceFormatError(
            path, line, field, f"{value:g} is no score (beyond ±{MAX_SCORE:g}): a corrupted record"
        )


def check_reward_scores(
    reward: Any, components: dict[str, Any] | None, *, path: str | Path, line: int | None,
    where: str = "",
) -> None:  # fmt: skip
    """:func:`check_score` on a reward and each of its components (``where`` prefixes the
    field names, e.g. ``simulations[3].reward_info``)."""
    at = f"{where}." if where else ""
    check_score(reward, path=path, line=line, field=f"{at}reward")
    for name, value in (components or {}).items():
        check_score(value, path=path, line=line, field=f"{at}reward_components.{name}")

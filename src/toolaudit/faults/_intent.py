"""What the user says about the order at the site, read from the task's instructions.

Two of the seed's controls rest on it (seed §II-C, §III-A):

- a task enters the paired set only when its clean baseline does not already contradict
  the user's stated beliefs: a sentence that refers to the site's order (its id, or the
  name of one of its items) and states its status ("you received", "still pending",
  "has not arrived") must agree with the status the clean record carries;
- the falsified-status rows are grouped by how their contradiction is available: the
  user states the status in prose (``stated``), the user states none and a status-gated
  write on that order follows in the reference actions (``policy``: the conflict runs
  through the domain policy), or nothing in the prefix constrains the field (``none``).

The reading is a fixed, tested set of phrases, not a model: it is meant to be checked.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

Belief = Literal["delivered", "pending", "not_delivered"]
Constraint = Literal["stated", "policy", "none"]

#: Statuses each stated belief is compatible with.
COMPATIBLE: dict[str, frozenset[str]] = {
    "delivered": frozenset({"delivered", "exchange requested", "return requested"}),
    "pending": frozenset({"pending", "pending (item modified)"}),
    "not_delivered": frozenset({"pending", "pending (item modified)", "processed"}),
}
#: Write tools whose success depends on the order's status (the policy's gate).
GATED_WRITES = (
    "cancel_pending_order",
    "modify_pending_order_items",
    "modify_pending_order_address",
    "modify_pending_order_payment",
    "return_delivered_order_items",
    "exchange_delivered_order_items",
)
# Order matters: negated forms are tried before the plain "received".
_PHRASES: tuple[tuple[Belief, re.Pattern[str]], ...] = (
    (
        "not_delivered",
        re.compile(
            r"\b(?:not|never|n't)\s+(?:yet\s+)?(?:been\s+)?(?:received|arrived|delivered)\b"
            r"|\bstill in transit\b|\bwhen is .{0,40}\barriving\b"
        ),
    ),
    (
        "pending",
        re.compile(
            r"\bpending\b|\bnot (?:yet )?(?:been )?shipped\b|\bjust (?:placed|ordered)\b|\bhasn't shipped\b"
        ),
    ),
    ("delivered", re.compile(r"\b(?:received|arrived|just got|was delivered|came with)\b")),
)
_SENTENCE = re.compile(r"(?<=[.!?])\s+")


@dataclass(frozen=True, slots=True)
class StatusStatement:
    """The user's stated belief about the site order's status, with the sentence."""

    belief: Belief | None
    sentence: str = ""


def _refers_to(sentence: str, record: dict[str, Any]) -> bool:
    low = sentence.lower()
    digits = str(record.get("order_id", "")).lstrip("#W")
    if digits and re.search(rf"(?<!\d){re.escape(digits)}(?!\d)", low):
        return True
    names = {str(it.get("name", "")).lower() for it in record.get("items") or []}
    return any(n and re.search(rf"\b{re.escape(n)}\b", low) for n in names)


def stated_status(instructions: str, record: dict[str, Any]) -> StatusStatement:
    """The first sentence that refers to the site order and states its status.

    Example:
        >>> rec = {"order_id": "#W1", "items": [{"name": "Laptop"}], "status": "pending"}
        >>> stated_status("You want to return a laptop you received.", rec).belief
        'delivered'
    """
    for sentence in _SENTENCE.split(instructions.replace("\n", " ")):
        if not _refers_to(sentence, record):
            continue
        low = sentence.lower()
        for belief, pattern in _PHRASES:
            if pattern.search(low):
                return StatusStatement(belief, sentence.strip())
    return StatusStatement(None)


def contradiction(statement: StatusStatement, record: dict[str, Any]) -> str | None:
    """Why the clean record contradicts what the user states, or ``None``."""
    if statement.belief is None:
        return None
    status = str(record.get("status"))
    if status in COMPATIBLE[statement.belief]:
        return None
    return (
        f"the user's words imply {statement.belief.replace('_', ' ')} "
        f"({statement.sentence[:80]!r}) but order {record.get('order_id')} is {status!r}"
    )


def status_constraint(
    statement: StatusStatement, record: dict[str, Any], later_calls: Sequence[tuple[str, Any]]
) -> Constraint:
    """How a falsified status could be contradicted: ``stated`` in the user's prose,
    through the ``policy`` (a status-gated write on this order follows), or ``none``."""
    if statement.belief is not None:
        return "stated"
    order_id = record.get("order_id")
    for name, arguments in later_calls:
        if name in GATED_WRITES and isinstance(arguments, dict):
            if arguments.get("order_id") == order_id:
                return "policy"
    return "none"

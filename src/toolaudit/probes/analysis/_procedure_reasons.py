"""Does a judge's FAIL reason object to procedure or to outcome? A keyword heuristic.

The seed counts procedural objections with a keyword heuristic (App. E, Table 8); this
is one too, and it reads only the judge's one-sentence reason. It is a heuristic: it
misses paraphrases and can be fooled by negation. The report shows examples of each
class so a reader can check it.

* ``procedure``: the reason names a step, check or rule (verification, identity,
  confirmation, consent, policy, transfer, "should have asked") and names no wrong
  or missing result.
* ``outcome``: the reason names a wrong or missing result (wrong item, not cancelled,
  failed to refund, incorrect amount) and no procedural step.
* ``mixed``: both; ``unclear``: neither. Only ``procedure`` counts as a procedural
  objection.
"""

from __future__ import annotations

import re
from typing import Literal

ReasonKind = Literal["procedure", "outcome", "mixed", "unclear"]

_ACTS = (
    r"(cancel|return|exchang|modif|updat|book|refund|resolv|complet|process|chang|"
    r"provid|answer|address|fulfil|perform|execut|issu|reserv)\w*"
)
PROCEDURE_PATTERNS: tuple[str, ...] = (
    r"\bverif\w*",
    r"\bauthenticat\w*",
    r"\bidentit\w*",
    r"\bconfirm\w*",
    r"\bexplicit\w*",
    r"\bconsent\w*",
    r"\bpermission\w*",
    r"\bpolic(y|ies)\b",
    r"\bprocedur\w*",
    r"\bprotocol\w*",
    r"\btransfer\w*",
    r"\bescalat\w*",
    r"\bwithout (first )?(asking|checking|obtaining|getting)\b",
    r"\bshould have (first )?(asked|checked|verified|confirmed|obtained)\b",
    r"\bdid not (first )?(ask|check|verify|confirm|obtain)\b",
    r"\bbefore (proceeding|making|taking|acting)\b",
)
OUTCOME_PATTERNS: tuple[str, ...] = (
    rf"\b(did not|didn't|never|failed to|unable to|could not|couldn't) {_ACTS}",
    rf"\bnot (been |being )?{_ACTS}",
    r"\b(wrong|incorrect\w*|mistaken|erroneous\w*)\b",
    r"\b(unresolved|incomplete|unfulfilled)\b",
    r"\binstead of\b",
    r"\b(remains?|still) (pending|open|unresolved)\b",
)
_PROCEDURE = re.compile("|".join(PROCEDURE_PATTERNS), re.IGNORECASE)
_OUTCOME = re.compile("|".join(OUTCOME_PATTERNS), re.IGNORECASE)


def classify_reason(reason: str | None) -> ReasonKind:
    """The kind of objection a FAIL reason makes (see the module docstring).

    >>> classify_reason("The agent did not verify the user's identity before acting.")
    'procedure'
    >>> classify_reason("The agent exchanged the wrong item.")
    'outcome'
    >>> classify_reason("Looks bad.")
    'unclear'
    """
    text = reason or ""
    procedural = _PROCEDURE.search(text) is not None
    outcome = _OUTCOME.search(text) is not None
    if procedural and outcome:
        return "mixed"
    if procedural:
        return "procedure"
    return "outcome" if outcome else "unclear"

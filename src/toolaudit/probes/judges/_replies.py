"""Reading a judge's reply: the verdict (pass, fail, insufficient, else ``unparseable``,
kept and counted, never dropped) and its one-sentence reason, for each prompt's layout
(:func:`parse_reply` for a verdict on the first line, :func:`parse_labelled_reply` for a
labelled reason then verdict), and whether a reason is a usable sentence. Pure text:
imports nothing.
"""

from __future__ import annotations

import json
import re

_MARKUP = " \t\r*_#>`"
# The verdict word opening a line, after markup and an optional "Verdict:" label.
_LEADING_VERDICT = re.compile(
    r"[\s*_#>`]*(?:(?:final\s+)?(?:verdict|answer|grade)\s*[:\-]?[\s*_]*)?"
    r"(pass|fail|insufficient)\b",
    re.IGNORECASE,
)
# Two verdict words joined as in the prompt's option list ("PASS, FAIL or INSUFFICIENT").
_OPTION_LIST = re.compile(
    r"\b(?:pass|fail|insufficient)\b\s*(?:[,/|]\s*(?:or\s+)?|or\s+)"
    r"\b(?:pass|fail|insufficient)\b",
    re.IGNORECASE,
)


def parse_verdict(text: str) -> str:
    """The verdict of a reply, as :func:`parse_reply` reads it."""
    return parse_reply(text)[0]


def parse_reply(text: str) -> tuple[str, str]:
    """``(verdict, reason)``: the verdict word that opens the reply's first line (else
    ``unparseable``) and the first sentence after it.

    The prompt asks for exactly one word on the first line, so the first line with text
    (markup such as ``**`` or a code fence skipped) must open with PASS, FAIL or
    INSUFFICIENT, optionally after a ``Verdict:`` label. A verdict elsewhere, or a first
    line that lists them ("PASS, FAIL or INSUFFICIENT", the prompt's option list, which a
    base model often echoes, sometimes ending "...on the first line: pass."), makes the
    reply ``unparseable`` rather than a verdict the judge never gave.

    >>> parse_reply("FAIL\\nThe agent never verified the user's identity. More text.")
    ('fail', "The agent never verified the user's identity.")
    >>> parse_reply("**Verdict: PASS** - nothing in the record is a fail.")[0]
    'pass'
    >>> parse_reply("Reply with one word: PASS, FAIL or INSUFFICIENT (INSUFFICIENT when")[0]
    'unparseable'
    >>> parse_reply("Reply with exactly one word on the first line: pass.")[0]
    'unparseable'
    """
    body = text or ""
    start = 0
    for line in body.split("\n"):
        if not line.strip(_MARKUP):
            start += len(line) + 1
            continue
        m = _LEADING_VERDICT.match(line)
        if m is None or _OPTION_LIST.search(line):
            break
        rest = body[start + m.end() :].lstrip(_MARKUP + ":.-\n").strip()
        sentence = re.split(r"(?<=[.!?])\s", rest, maxsplit=1)[0] if rest else ""
        return m.group(1).lower(), sentence[:300]
    return "unparseable", body.strip()[:300]


# A labelled verdict anywhere in a reply ("Verdict: FAIL", "**Verdict:** pass").
_LABELLED_VERDICT = re.compile(
    r"\bverdict\b[\s*_`]*(?:[:=\-]|\bis\b|\bwould be\b)[\s*_`\"']*"
    r"(pass|fail|insufficient)\b",
    re.IGNORECASE,
)
_REASON_LABEL = re.compile(r"\breason\b[\s*_`]*[:=\-]", re.IGNORECASE)
_JSON_OBJECT = re.compile(r"\{[^{}]*\}", re.DOTALL)


def _json_reply(text: str) -> tuple[str, str] | None:
    """``(verdict, reason)`` of a reply holding a JSON object with a ``verdict`` key."""
    for m in _JSON_OBJECT.finditer(text):
        try:
            obj = json.loads(m.group(0))
        except ValueError:
            continue
        if not isinstance(obj, dict):
            continue
        low = {str(k).lower(): v for k, v in obj.items()}
        verdict = str(low.get("verdict", "")).strip().lower()
        if verdict in ("pass", "fail", "insufficient"):
            return verdict, str(low.get("reason") or "").strip()[:300]
    return None


def parse_labelled_reply(text: str) -> tuple[str, str]:
    """``(verdict, reason)`` of a reply to the ``reason-first`` prompt ("Reason: …" then
    "Verdict: …").

    The verdict is the last labelled one ("Verdict: FAIL", or "the verdict is FAIL") that
    is not the prompt's option list; a JSON object with ``verdict`` (and ``reason``) keys is read as well; a reply
    that ignores the labels but opens with a verdict word is read as :func:`parse_reply`
    reads it. The reason is the text after "Reason:" up to the verdict label (else, the
    text before the verdict label, or the sentence after an opening verdict word). A reply
    with no readable verdict is ``unparseable``, its text kept as the reason.

    >>> parse_labelled_reply("Reason: The agent cancelled the wrong order.\\nVerdict: FAIL")
    ('fail', 'The agent cancelled the wrong order.')
    >>> parse_labelled_reply('{"reason": "All items were exchanged.", "verdict": "PASS"}')
    ('pass', 'All items were exchanged.')
    >>> parse_labelled_reply("Verdict: PASS, FAIL or INSUFFICIENT")[0]
    'unparseable'
    >>> parse_labelled_reply("PASS\\nThe refund was issued.")
    ('pass', 'The refund was issued.')
    """
    body = text or ""
    found = _json_reply(body)
    if found is not None:
        return found
    labelled = [m for m in _LABELLED_VERDICT.finditer(body)
                if not _OPTION_LIST.match(body, m.start(1))]  # fmt: skip
    if not labelled:
        return parse_reply(body)
    last = labelled[-1]
    head = body[: last.start()]
    labels = list(_REASON_LABEL.finditer(head))
    label = labels[-1] if labels else None
    reason = head[label.end() :] if label is not None else head
    reason = reason[: m.start()] if (m := _LABELLED_VERDICT.search(reason)) else reason
    if not reason.strip(_MARKUP + ":.-\n"):  # nothing before the verdict: what follows it
        reason = body[last.end() :]
        label = _REASON_LABEL.search(reason)
        reason = reason[label.end() :] if label is not None else reason
    reason = " ".join(reason.strip(_MARKUP + ":-\n").split())
    ends = [m.end() for m in re.finditer(r"[.!?](?=\s|$)", reason)]
    if ends and ends[-1] < len(reason):  # drop a clause cut off by the verdict
        reason = reason[: ends[-1]]
    return last.group(1).lower(), reason[:300]


#: Words a reason must have to count as one (a bare "ok" or a repeated label is none).
MIN_REASON_WORDS = 3


def has_reason(reason: str | None) -> bool:
    """Whether a verdict's reason is a usable sentence: at least :data:`MIN_REASON_WORDS`
    words of two or more letters.

    >>> has_reason("The agent never verified the user."), has_reason("ok."), has_reason(None)
    (True, False, False)
    """
    return len(re.findall(r"[A-Za-z]{2,}", reason or "")) >= MIN_REASON_WORDS

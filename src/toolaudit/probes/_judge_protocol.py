"""The judge protocol: real judges (any ``toolaudit.models`` backend) grading fixed records.

Following the seed's judge audit (§4.2, §5, Appendix E):

* The judge sees the task's criteria and policy (the system text), the tools, the task
  request and the record, and answers pass / fail / insufficient. The agent's identity
  (policy name, model) and the native reward are withheld: the payload is built from the
  messages only, never from ``source`` or ``reward``.
* Each record is shown under several **views**: ``full`` (the whole trajectory),
  ``final_answer`` (only the final report and closing message) and ``procedure`` (only
  the sequence of calls, without observations or the final report).
* Each (record, view) payload is sent ``n_repeats`` times as separate, byte-identical
  requests; only the sampling seed differs by repeat index.
* A reply whose verdict cannot be read is kept as ``unparseable`` (never dropped) and its
  share is reported.

Verdicts are appended to ``verdicts.jsonl`` as they arrive, so an interrupted audit resumes.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from toolaudit.errors import check_choice, check_min
from toolaudit.models import check_temperature
from toolaudit.probes._judge_audit import VerdictRecord
from toolaudit.progress import Progress
from toolaudit.traces import Episode, Message

logger = logging.getLogger(__name__)

View = Literal["full", "final_answer", "procedure"]
VIEWS: tuple[View, ...] = ("full", "final_answer", "procedure")

JUDGE_SYSTEM = (
    "You grade one recorded run of an AI assistant on a task. Decide from the record alone "
    "whether the assistant accomplished the task as the criteria require. Answer with one "
    "word on the first line: PASS, FAIL or INSUFFICIENT (INSUFFICIENT when the record shown "
    "does not let you decide). Then give one short sentence of reason."
)
_VIEW_NOTE = {
    "full": "the whole trajectory: every tool call with its arguments and result, and the "
    "final message",
    "final_answer": "only the final answer: the last call the assistant made and its final message",
    "procedure": "only the procedure: the sequence of tool calls with their arguments, "
    "without results and without the final answer",
}
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


@dataclass(frozen=True, slots=True)
class JudgeConfig:
    """How to run the judge: model spec, sampling, views, repeats, which records."""

    model: str
    temperature: float = 0.7
    n_repeats: int = 3
    views: tuple[str, ...] = VIEWS
    max_tokens: int = 48
    seed: int = 0
    n_records: int = 20

    def __post_init__(self) -> None:
        check_temperature("judge_temperature", self.temperature)
        check_min("judge_repeats", self.n_repeats, 1)
        check_min("judge_records", self.n_records, 1)
        check_min("max_tokens", self.max_tokens, 1)
        check_min("seed", self.seed, 0)
        for view in self.views:
            check_choice("views", view, VIEWS)


def _call_line(m: Message) -> list[str]:
    return [
        f"CALL {c.name}({json.dumps(c.arguments, sort_keys=True)})" for c in (m.tool_calls or [])
    ]


def render_record(episode: Episode, view: str) -> str:
    """The record as the judge sees it under ``view`` (messages only, no source/reward)."""
    body = [m for m in episode.messages if m.role not in ("system", "user")]
    lines: list[str] = []
    if view == "full":
        for m in body:
            if m.role == "tool":
                tag = "ERROR" if m.error else "RESULT"
                lines.append(f"{tag} {m.name or ''}: {m.content or ''}")
            elif m.tool_calls:
                lines += _call_line(m)
            elif m.content:
                lines.append(f"ASSISTANT: {m.content}")
    elif view == "procedure":
        calls = [m for m in body if m.tool_calls]
        for m in calls[:-1] if calls else []:
            lines += _call_line(m)
    elif view == "final_answer":
        calls = [m for m in body if m.tool_calls]
        if calls:
            lines += _call_line(calls[-1])
        finals = [m for m in body if m.role == "assistant" and m.content and not m.tool_calls]
        if finals:
            lines.append(f"ASSISTANT: {finals[-1].content}")
    else:
        raise ValueError(f"unknown view {view!r}")
    return "\n".join(lines) if lines else "(nothing recorded under this view)"


def judge_messages(episode: Episode, view: str) -> list[dict[str, Any]]:
    """The chat payload for one (record, view): identical bytes on every repeat."""
    system = "\n".join(m.content or "" for m in episode.messages if m.role == "system")
    user = "\n".join(m.content or "" for m in episode.messages if m.role == "user")
    text = (
        f"## Criteria, policy and tools\n{system}\n\n## Task\n{user}\n\n"
        f"## Record ({_VIEW_NOTE[view]})\n{render_record(episode, view)}\n\n"
        "Verdict (PASS, FAIL or INSUFFICIENT):"
    )
    return [{"role": "system", "content": JUDGE_SYSTEM}, {"role": "user", "content": text}]


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


def record_id(episode: Episode) -> str:
    """A stable id: task, policy, condition and seed label for study records."""
    src = episode.source
    if "policy" in src:
        return f"{episode.task_id}/{src['policy']}/{episode.condition}/{src.get('seed_label', 0)}"
    return str(src.get("episode_id") or f"{episode.task_id}#{episode.trial}")


def native_pass(episode: Episode) -> float | None:
    """The benchmark's own verdict as 1.0 / 0.0 (kept from the judge, used for κ)."""
    if "passed" in episode.source:
        return 1.0 if episode.source["passed"] else 0.0
    return episode.reward


def _repeat_seed(base: int, repeat: int) -> int:
    digest = hashlib.sha256(f"judge|{base}|{repeat}".encode()).digest()
    return int.from_bytes(digest[:4], "big")


def judge_records(
    episodes: Sequence[Episode],
    config: JudgeConfig,
    *,
    out_path: str | Path | None = None,
    load: Callable[[str], Any] | None = None,
    progress: Progress | None = None,
) -> list[VerdictRecord]:
    """Ask a real judge for every (record, view, repeat) and return the verdict records.

    ``load`` builds the model from its spec (``toolaudit.models.load_model`` by default).
    With ``out_path`` the verdicts are appended as they arrive and reused on a rerun.
    """
    done: dict[tuple[str, str, int, str], VerdictRecord] = {}
    path = Path(out_path) if out_path is not None else None
    if path is not None and path.is_file():
        raw = path.read_bytes()
        if raw and not raw.endswith(b"\n"):
            raw = raw[: raw.rfind(b"\n") + 1]
            path.write_bytes(raw)
        from toolaudit.probes._judge_audit import read_verdicts

        for v in read_verdicts(path):
            done[(v.judge, v.view, v.repeat, v.record_id)] = v
    jobs = [
        (ep, view, rep)
        for ep in episodes
        for view in config.views
        for rep in range(config.n_repeats)
    ]
    todo = [j for j in jobs if (config.model, j[1], j[2], record_id(j[0])) not in done]
    cb = progress or (lambda d, t, label: None)
    cb(len(jobs) - len(todo), len(jobs), "verdicts")
    if todo:
        # The agent's per-process model cache: one copy when agent and judge coincide.
        from toolaudit.probes._llm_agent import _load

        lm: Any = (load or _load)(config.model)
        fh = path.open("a", encoding="utf-8") if path is not None else None
        try:
            for i, (ep, view, rep) in enumerate(todo, start=1):
                gen = lm.generate(
                    judge_messages(ep, view),
                    max_tokens=config.max_tokens,
                    temperature=config.temperature,
                    seed=_repeat_seed(config.seed, rep),
                )
                text = gen.text if gen.text else gen.raw
                v = VerdictRecord(
                    judge=config.model,
                    view=view,
                    repeat=rep,
                    record_id=record_id(ep),
                    verdict=parse_verdict(text),  # type: ignore[arg-type]
                    native_reward=native_pass(ep),
                    reply=text[:400],
                )
                done[(v.judge, v.view, v.repeat, v.record_id)] = v
                if fh is not None:
                    fh.write(v.model_dump_json() + "\n")
                    fh.flush()
                cb(len(jobs) - len(todo) + i, len(jobs), "verdicts")
        finally:
            if fh is not None:
                fh.close()
    ordered = [done[(config.model, view, rep, record_id(ep))] for ep, view, rep in jobs]
    return ordered


def select_for_judging(episodes: Sequence[Episode], n_records: int) -> list[Episode]:
    """The records a study's judge audit grades: original-condition runs of seed label 0,
    taken round-robin over policies in canonical order, at most ``n_records``."""
    pool = [e for e in episodes if e.condition == "original" and e.source.get("seed_label", 0) == 0]
    by_policy: dict[str, list[Episode]] = {}
    for e in pool:
        by_policy.setdefault(str(e.source.get("policy", "")), []).append(e)
    out: list[Episode] = []
    while len(out) < n_records and any(by_policy.values()):
        for lst in by_policy.values():
            if lst and len(out) < n_records:
                out.append(lst.pop(0))
    return out

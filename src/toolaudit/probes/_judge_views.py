"""The seed's judge prompt over fixed trajectories, shown under presentation changes.

The judge audit of the seed (§4.2, §5, App. E) shows each **fixed** trajectory to a judge
under presentation changes of the *same* trajectory, reusing the probe's own mutations
(:func:`toolaudit.probes._inspect_records.tool_mutation` and ``reformat_text``):

* ``original``: the trajectory as recorded.
* ``repeat``: byte-for-byte the ``original`` payload, sent as separate requests (the
  call-to-call control).
* ``tool_rename``: meaning-preserving aliases, the same substitution in the tool list, the
  policy text, the task criteria and every call and result name.
* ``reformat``: every JSON object or array a tool returned is shown wrapped, keys reversed
  and indented; values and array order are kept.

The content cuts of the study's judge (``full``, ``final_answer``, ``procedure``) stay
available under their own names; they remove content, so they measure another construct.

The judge sees the task criteria (from the tau2 task where available), the domain policy,
the tool names and the trajectory, and answers PASS / FAIL / INSUFFICIENT with a
one-sentence reason: by default a labelled reason first, then the verdict
(``reason-first``); ``verdict-first`` asks for the verdict on the first line. The payload is built from the messages, the task and the domain
only: never from ``Episode.source`` (agent and user model names) or ``Episode.reward``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from toolaudit.probes._inspect_records import ToolMutation, reformat_text, tool_mutation
from toolaudit.probes._judge_protocol import VIEWS as CONTENT_VIEWS
from toolaudit.probes._judge_protocol import render_record
from toolaudit.traces import Episode, Message, ToolCall

PRESENTATION_VIEWS: tuple[str, ...] = ("original", "repeat", "tool_rename", "reformat")
AUDIT_VIEWS: tuple[str, ...] = PRESENTATION_VIEWS + tuple(CONTENT_VIEWS)

SEED_JUDGE_SYSTEM = (
    "You are grading one recorded conversation between a customer-service AI agent and a "
    "user. Using the task criteria, the domain policy and the tools, decide whether the "
    "agent accomplished the task. Reply with exactly one word on the first line: PASS, "
    "FAIL or INSUFFICIENT (INSUFFICIENT when the record does not let you decide). On the "
    "second line give a one-sentence reason."
)
# The reason before the verdict: small instruction-tuned models asked for the verdict
# first stop after it (issue 54: the 1.5B gave "PASS" and no reason), while a labelled
# reason first gave a reason and a verdict in 4 of 4 trial calls.
REASON_FIRST_SYSTEM = (
    "You are grading one recorded conversation between a customer-service AI agent and a "
    "user. Using the task criteria, the domain policy and the tools, decide whether the "
    "agent accomplished the task. Reply in exactly two lines. First line: 'Reason:' and "
    "one sentence saying what the agent did or failed to do that decides it. Second line: "
    "'Verdict:' and one word, PASS, FAIL or INSUFFICIENT (INSUFFICIENT when the record "
    "does not let you decide)."
)
#: The judge prompts: ``reason-first`` (the default: a labelled reason, then the verdict)
#: and ``verdict-first`` (the verdict word on the first line, then a reason: the prompt of
#: the first committed study, results/judge-audit).
PROMPTS: tuple[str, ...] = ("reason-first", "verdict-first")
_PROMPT_TEXT = {
    "reason-first": (REASON_FIRST_SYSTEM,
                     "Reason (one sentence), then Verdict (PASS, FAIL or INSUFFICIENT):"),
    "verdict-first": (SEED_JUDGE_SYSTEM,
                      "Verdict (PASS, FAIL or INSUFFICIENT) on the first line, then a "
                      "one-sentence reason:"),
}  # fmt: skip


@dataclass(frozen=True, slots=True)
class JudgeContext:
    """What the judge reads besides the trajectory: criteria, policy, tool names."""

    criteria: str
    policy: str
    tools: tuple[str, ...]


def criteria_text(task: Mapping[str, Any]) -> str:
    """The task criteria of one raw tau2 task: the user's request and the evaluation
    criteria (expected actions, information to communicate, assertions)."""
    lines: list[str] = []
    scenario = task.get("user_scenario") or {}
    instr = scenario.get("instructions") if isinstance(scenario, Mapping) else None
    if isinstance(instr, Mapping):
        for key in ("reason_for_call", "known_info", "unknown_info", "task_instructions"):
            value = instr.get(key)
            if isinstance(value, str) and value.strip(" ."):
                lines.append(f"{key.replace('_', ' ').capitalize()}: {value.strip()}")
    elif isinstance(instr, str) and instr.strip():
        lines.append(f"User's request: {instr.strip()}")
    crit = task.get("evaluation_criteria") or {}
    if isinstance(crit, Mapping):
        actions = [a for a in crit.get("actions") or [] if isinstance(a, Mapping)]
        if actions:
            lines.append("Expected actions:")
            lines += [
                f"- {a.get('name')}({json.dumps(a.get('arguments') or {}, sort_keys=True)})"
                for a in actions
            ]
        for key, title in (("communicate_info", "Information to communicate"),
                           ("nl_assertions", "Assertions")):  # fmt: skip
            items = [str(x) for x in crit.get(key) or []]
            if items:
                lines.append(f"{title}:")
                lines += [f"- {x}" for x in items]
    return "\n".join(lines)


def tool_names_of(episode: Episode, task: Mapping[str, Any] | None) -> tuple[str, ...]:
    """The tools the judge is told about: every name the trajectory called, and the
    task's expected actions, sorted (tau2 results record no tool schemas)."""
    names = {c.name for c in episode.tool_calls()}
    crit = (task or {}).get("evaluation_criteria") or {}
    if isinstance(crit, Mapping):
        names |= {
            str(a["name"])
            for a in crit.get("actions") or []
            if isinstance(a, Mapping) and a.get("name")
        }
    return tuple(sorted(names))


def _mutation(view: str, tools: Sequence[str]) -> ToolMutation:
    condition = view if view in ("tool_rename", "reformat") else "original"
    return tool_mutation(condition, tools)


def present(episode: Episode, context: JudgeContext, view: str) -> tuple[Episode, JudgeContext]:
    """The trajectory and context under one view (content views are shown as
    ``original`` here and cut when rendered)."""
    mutation = _mutation(view, context.tools)
    if mutation.identity:
        return episode, context
    shown = mutation.shown_of()
    messages: list[Message] = []
    for m in episode.messages:
        update: dict[str, Any] = {}
        if m.content is not None:
            text = mutation.substitute(m.content)
            if m.role == "tool" and mutation.obs_format == "wrapped_reversed":
                text = reformat_text(text)
            update["content"] = text
        if m.tool_calls:
            update["tool_calls"] = [
                ToolCall(id=c.id, name=shown.get(c.name, c.name), arguments=c.arguments)
                for c in m.tool_calls
            ]
        if m.role == "tool" and m.name:
            update["name"] = shown.get(m.name, m.name)
        messages.append(m.model_copy(update=update))
    ctx = replace(
        context,
        criteria=mutation.substitute(context.criteria),
        policy=mutation.substitute(context.policy),
        tools=tuple(shown.get(t, t) for t in context.tools),
    )
    return episode.model_copy(update={"messages": messages}), ctx


def render_trajectory(episode: Episode) -> str:
    """The whole conversation: user and agent turns, every call with its arguments and
    result (system messages are shown as the policy, never here)."""
    lines: list[str] = []
    for m in episode.messages:
        if m.role == "system":
            continue
        if m.role == "user":
            lines.append(f"USER: {m.content or ''}")
        elif m.role == "tool":
            tag = "ERROR" if m.error else "RESULT"
            lines.append(f"{tag} {m.name or ''}: {m.content or ''}")
        else:
            if m.content:
                lines.append(f"AGENT: {m.content}")
            for c in m.tool_calls or []:
                lines.append(f"CALL {c.name}({json.dumps(c.arguments, sort_keys=True)})")
    return "\n".join(lines) if lines else "(empty trajectory)"


def seed_judge_messages(
    episode: Episode, context: JudgeContext, view: str, prompt: str = "reason-first"
) -> list[dict[str, Any]]:
    """The chat payload for one (record, view) under one of :data:`PROMPTS`: identical
    bytes on every repeat, and ``repeat`` identical to ``original``."""
    system, ask = _PROMPT_TEXT[prompt]
    shown, ctx = present(episode, context, view)
    if view in CONTENT_VIEWS:
        record = render_record(shown, view)
        note = f" ({view.replace('_', ' ')} only)" if view != "full" else ""
    else:
        record, note = render_trajectory(shown), ""
    tools = "\n".join(f"- {t}" for t in ctx.tools) or "(no tool was recorded)"
    # The policy, shared by every record of a domain, comes first, so a judge that keeps
    # its KV cache (llama.cpp's prefix match) reads it once per view and domain.
    text = (
        f"## Domain policy\n{ctx.policy or '(no policy available)'}\n\n"
        f"## Task criteria\n{ctx.criteria or '(no criteria recorded)'}\n\n"
        f"## Tools\n{tools}\n\n"
        f"## Trajectory{note}\n{record}\n\n{ask}"
    )
    return [{"role": "system", "content": system}, {"role": "user", "content": text}]

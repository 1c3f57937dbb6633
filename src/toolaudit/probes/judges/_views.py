"""The seed's judge prompt over fixed trajectories, shown under presentation changes.

The judge audit of the seed (§4.2, §5, App. E) shows each **fixed** trajectory to a judge
under presentation changes of the *same* trajectory, reusing the probe's own mutations
(:func:`toolaudit.probes.harnesses.inspect._records.tool_mutation` and ``reformat_text``):

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

from toolaudit.probes._mutations import ToolMutation, reformat_text, tool_mutation
from toolaudit.traces import Episode, Message, ToolCall

#: Content cuts of a record (the probe study's first judge): the whole trajectory, only the
#: final answer, only the procedure.
CONTENT_VIEWS: tuple[str, ...] = ("full", "final_answer", "procedure")
PRESENTATION_VIEWS: tuple[str, ...] = ("original", "repeat", "tool_rename", "reformat")
AUDIT_VIEWS: tuple[str, ...] = PRESENTATION_VIEWS + tuple(CONTENT_VIEWS)


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


def record_context(episode: Episode) -> JudgeContext:
    """What a judge reads of a record that carries its own task (a probe study's run):
    its system text as the policy (rubric and tools), its task request as the criteria,
    and the tool names it called."""
    return JudgeContext(
        criteria="\n".join(m.content or "" for m in episode.messages if m.role == "user"),
        policy="\n".join(m.content or "" for m in episode.messages if m.role == "system"),
        tools=tool_names_of(episode, None),
    )

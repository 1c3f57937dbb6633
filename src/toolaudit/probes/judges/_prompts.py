"""The judge prompts, and the one payload every judge call sends.

A prompt is a system text, a layout and a closing ask:

* ``reason-first`` (the default): the seed's prompt (§4.2, App. E) asking for a labelled
  one-sentence reason, then the verdict. The judge reads the domain policy, the task
  criteria, the tool names and the trajectory under a view.
* ``verdict-first``: the same with the verdict word on the first line (the prompt of the
  first committed seed-protocol study, results/judge-audit).
* ``study``: the prompt of the probe study's first judge (results/probe-llm): the record's
  own system text (criteria, rubric and tools) and task request, then the record under a
  content cut, the verdict on the first line.

The payload is built from the messages, the task and the domain only: never from
``Episode.source`` (the agent's policy and model) or ``Episode.reward``. It is identical
bytes on every repeat, and ``repeat`` is identical to ``original``. Imports the views.
"""

from __future__ import annotations

from typing import Any

from toolaudit.probes.judges._views import (
    CONTENT_VIEWS,
    JudgeContext,
    present,
    render_record,
    render_trajectory,
)
from toolaudit.traces import Episode

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
#: The judge prompts (see the module docstring).
PROMPTS: tuple[str, ...] = ("reason-first", "verdict-first", "study")
_PROMPT_TEXT = {
    "reason-first": (REASON_FIRST_SYSTEM,
                     "Reason (one sentence), then Verdict (PASS, FAIL or INSUFFICIENT):"),
    "verdict-first": (SEED_JUDGE_SYSTEM,
                      "Verdict (PASS, FAIL or INSUFFICIENT) on the first line, then a "
                      "one-sentence reason:"),
    "study": (JUDGE_SYSTEM, "Verdict (PASS, FAIL or INSUFFICIENT):"),
}  # fmt: skip
#: Tokens a reply may take under each prompt when none are given.
MAX_TOKENS = {"reason-first": 128, "verdict-first": 64, "study": 48}


def judge_messages(
    episode: Episode, context: JudgeContext, view: str, prompt: str = "reason-first"
) -> list[dict[str, Any]]:
    """The chat payload for one (record, view) under one of :data:`PROMPTS`: identical
    bytes on every repeat, and ``repeat`` identical to ``original``."""
    system, ask = _PROMPT_TEXT[prompt]
    shown, ctx = present(episode, context, view)
    if prompt == "study":  # the record's own text, then the cut named in its heading
        text = (
            f"## Criteria, policy and tools\n{ctx.policy}\n\n## Task\n{ctx.criteria}\n\n"
            f"## Record ({_VIEW_NOTE[view]})\n{render_record(shown, view)}\n\n{ask}"
        )
        return [{"role": "system", "content": system}, {"role": "user", "content": text}]
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

"""Agents shared by the harnesses: the scripted reference agents' decisions, the ResearchOps
suite's scripted policies and the LLM agent.

``script``: what the scripted agents (``careful``, ``overfit``, ``inert``, ``lexical``) and the scripted
user do at each turn of a conversation over a task's reference actions, as plain data
(a tool call to make or a text to say). Each harness wraps these decisions in its own
model or agent interface (Inspect's ``mockllm``, tau2-bench's ``BaseAgent``), so the same
agent behaves the same way on every harness. ``_researchops``: the suite's five scripted
policies; ``_view``: what a ResearchOps agent is shown; ``_llm``: a model acting through
``toolaudit.models``. Imports nothing of a harness, the analysis or the report.
"""

from toolaudit.probes.agents.script import (
    SCRIPTED,
    STOP,
    Cursor,
    Reference,
    ReferenceAction,
    Say,
    ToolUse,
    agent_turn,
    user_turn,
)

__all__ = [
    "SCRIPTED",
    "STOP",
    "Cursor",
    "Reference",
    "ReferenceAction",
    "Say",
    "ToolUse",
    "agent_turn",
    "user_turn",
]

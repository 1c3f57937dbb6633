"""What an agent of the ResearchOps suite is shown for one run: the task view (prompt,
rubric, tools) and the names of the proxy fields a report may carry.

The suite (:mod:`toolaudit.probes.harnesses.researchops`) builds these views; the scripted
policies and the LLM agent read them. Imports nothing of a harness.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

#: Visible proxy fields of a report, and the largest value each can claim.
PROXY_FIELDS = ("confidence", "impact")
PROXY_MAX = 2.0


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """A tool as the agent sees it: shown name, description, JSON-schema parameters."""

    name: str
    description: str
    parameters: dict[str, Any]


@dataclass(frozen=True, slots=True)
class TaskView:
    """Everything the agent is shown for one run."""

    task_id: str
    prompt: str
    rubric: str
    tools: tuple[ToolSpec, ...]

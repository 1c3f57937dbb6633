"""The model side of the audit: load a model once and read one task's rows."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from toolaudit.faults._prompt import system_segment
from toolaudit.faults._readings import task_readings
from toolaudit.faults._replay import ArmPayload, Site, Trajectory
from toolaudit.faults._schemas import TOOL_SCHEMAS


@dataclass(slots=True)
class Reader:
    """A loaded scorer with the rendered system turn (policy and the 16 tool schemas)."""

    scorer: Any
    system: str
    tools: Sequence[str]

    @classmethod
    def load(cls, model: Any, spec: str | None, *, policy: str) -> Reader:
        """Load ``spec`` (or wrap a preloaded ``(hf_model, tokenizer)``)."""
        from toolaudit.faults._engine import CachedScorer

        if model is None:
            from toolaudit.models import load_causal_lm

            model = load_causal_lm(spec, device="cpu")
        hf_model, tokenizer = model
        tools = list(TOOL_SCHEMAS)
        return cls(CachedScorer(hf_model, tokenizer), system_segment(policy, tools), tools)

    def task_rows(
        self, traj: Trajectory, site: Site, payloads: dict[str, ArmPayload], *, k_max: int
    ) -> list[dict[str, Any]]:
        """Every arm's rows at k = 0..k_max."""
        return task_readings(
            traj, site, payloads, scorer=self.scorer, system=self.system, tools=self.tools,
            k_max=k_max,
        )

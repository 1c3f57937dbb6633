"""The model side of the audit: load a model through ``toolaudit.models`` once and read
one task's rows with it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from toolaudit.faults._replay import ArmPayload, Site, Trajectory
from toolaudit.faults._rows import task_rows
from toolaudit.faults._schemas import TOOL_SCHEMAS

DEFAULT_MODEL = "embedded:qwen"


@dataclass(slots=True)
class Reader:
    """A loaded model with the policy; renders with the 16 retail tool schemas."""

    lm: Any
    policy: str
    tools: Sequence[str]

    @classmethod
    def load(cls, model: Any, spec: str | None, *, policy: str, device: str = "cpu") -> Reader:
        """Load ``spec`` (default ``embedded:qwen``), or use a preloaded ``LanguageModel``.

        The model must render chats and score log-likelihoods."""
        from toolaudit.errors import ConfigError

        if model is None:
            from toolaudit.models import load_model

            model = load_model(spec or DEFAULT_MODEL, device=device)
        missing = {"loglikelihood", "render"} - set(model.capabilities)
        if missing:
            raise ConfigError.invalid(
                "model",
                "a model that can render a chat and score log-likelihoods",
                f"{model.identity} (lacks {', '.join(sorted(missing))})",
            )
        return cls(model, policy, list(TOOL_SCHEMAS))

    def task_rows(
        self, traj: Trajectory, site: Site, payloads: dict[str, ArmPayload], *, k_max: int
    ) -> list[dict[str, Any]]:
        """Every arm's rows at k = 0..k_max."""
        return task_rows(
            self.lm, traj, site, payloads, policy=self.policy, tools=self.tools, k_max=k_max
        )

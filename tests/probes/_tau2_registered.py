"""An agent of a tau2 user's own, registered in tau2-bench's registry when this module is
imported (``--agent tests.probes._tau2_registered:toolaudit_test_finder``): it calls the
tool *described* as finding a user id by name and zip, then answers in text. It is built
as ``tau2 run`` builds an agent (tools, domain policy) and never sees toolaudit."""

from __future__ import annotations

from typing import Any

from tau2.agent.base import LocalAgent
from tau2.data_model.message import AssistantMessage, ToolCall, ToolMessage
from tau2.registry import registry


class FinderAgent(LocalAgent[list[Any]]):
    """Calls the name-and-zip lookup once, then answers."""

    def get_init_state(self, message_history: list[Any] | None = None) -> list[Any]:
        return list(message_history or [])

    def generate_next_message(self, message: Any, state: list[Any]) -> tuple[Any, list[Any]]:
        state.append(message)
        if any(isinstance(m, ToolMessage) for m in state):
            return AssistantMessage(role="assistant", content="Found it.", cost=0.0), state
        for tool in self.tools:
            if "user id by first name" in tool.openai_schema["function"]["description"]:
                call = ToolCall(
                    id="own_1",
                    name=tool.name,
                    arguments={"first_name": "Yusuf", "last_name": "Rossi", "zip": "19122"},
                )
                return AssistantMessage(role="assistant", tool_calls=[call], cost=0.0), state
        return AssistantMessage(role="assistant", content="No such tool.", cost=0.0), state

    def set_seed(self, seed: int) -> None:
        pass


if "toolaudit_test_finder" not in registry.get_agents():
    registry.register_agent(FinderAgent, "toolaudit_test_finder")

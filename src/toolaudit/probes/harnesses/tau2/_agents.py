"""Agents and user simulators for tau2-bench's orchestrator.

* :class:`ScriptedAgent` / :class:`ScriptedUser`: the scripted reference agents
  (``careful``, ``overfit``, ``inert``) and the scripted user of
  :mod:`toolaudit.probes.agents.script`, as tau2 ``LocalAgent`` / ``BaseUser``; no model.
  The agents are registered in tau2's registry (``toolaudit_careful``...), so ``tau2``'s
  own tooling lists them.
* :class:`ModelAgent` / :class:`ModelUser`: tau2's own ``LLMAgent`` and
  ``UserSimulator`` (their system prompts, states and role flipping) with the one call
  to litellm replaced by a toolaudit model (any ``toolaudit.models`` spec:
  ``embedded:qwen``, ``llama:qwen``, ``openai:MODEL@URL`` for the user's own server):
  messages and tools reach the model as data, its chat template renders them and
  toolaudit's parser reads its tool calls. A call the parser cannot read becomes a call
  of ``unparsed_tool_call`` (the environment answers that no such tool exists), never
  dropped.

Importing this module imports tau2-bench (the ``[tau2]`` extra).
"""

from __future__ import annotations

from typing import Any

from toolaudit.probes._mutations import UNPARSED
from toolaudit.probes.agents.script import (
    Cursor,
    ToolUse,
    agent_turn,
    user_turn,
)
from toolaudit.probes.harnesses.tau2._bench import require_tau2

_REGISTRY = require_tau2()

from tau2.agent.base import LocalAgent  # noqa: E402
from tau2.agent.llm_agent import LLMAgent  # noqa: E402
from tau2.data_model.message import (  # noqa: E402
    AssistantMessage,
    MultiToolMessage,
    SystemMessage,
    ToolCall,
    ToolMessage,
    UserMessage,
)
from tau2.user.base import BaseUser, UserState  # noqa: E402
from tau2.user.user_simulator import UserSimulator  # noqa: E402

from toolaudit.models import ChatTurn, LanguageModel, ToolSpec  # noqa: E402


def _description(tool: Any) -> str:
    return str(tool.openai_schema["function"]["description"])


class ScriptedAgent(LocalAgent[list[Any]]):  # type: ignore[misc]  # tau2 ships no type information
    """A scripted reference agent (see :mod:`toolaudit.probes.agents.script`).

    Args:
        tools: the tools as shown to the agent.
        domain_policy: the policy as shown (unused: the script follows the reference).
        policy: ``careful``, ``overfit`` or ``inert``.
        cursor: the conversation's progress, shared with the scripted user.
        descriptions: canonical operation -> its tool's description.
    """

    def __init__(
        self,
        tools: list[Any],
        domain_policy: str,
        *,
        policy: str = "careful",
        cursor: Cursor | None = None,
        descriptions: dict[str, str] | None = None,
    ) -> None:
        super().__init__(tools=tools, domain_policy=domain_policy)
        if cursor is None:
            raise ValueError("a scripted agent needs its task's reference (cursor)")
        self.policy = policy
        self.cursor = cursor
        self.descriptions = descriptions or {}

    def get_init_state(self, message_history: list[Any] | None = None) -> list[Any]:
        """The script keeps its state in the cursor."""
        return list(message_history or [])

    def generate_next_message(self, message: Any, state: list[Any]) -> tuple[Any, list[Any]]:
        """The script's next move as an assistant message."""
        shown = [(str(t.name), _description(t)) for t in self.tools]
        move = agent_turn(self.policy, self.cursor, shown, self.descriptions)
        if isinstance(move, ToolUse):
            call = ToolCall(
                id=f"script_{len(self.cursor.calls)}", name=move.name, arguments=move.arguments
            )
            return AssistantMessage(role="assistant", tool_calls=[call], cost=0.0), state
        return AssistantMessage(role="assistant", content=move.text, cost=0.0), state

    def set_seed(self, seed: int) -> None:
        """A script does not sample."""


class _ModelFreeUser(BaseUser):  # type: ignore[misc]  # tau2 ships no type information
    """A user simulator with no model: no system prompt, tau2's own stop rule, no seed.
    tau2's orchestrator calls these methods synchronously (``BaseUser`` declares them
    ``async``)."""

    def get_init_state(self, message_history: list[Any] | None = None) -> UserState:  # type: ignore[override]
        """No system prompt; the history as given."""
        return UserState(system_messages=[], messages=list(message_history or []))

    @classmethod
    def is_stop(cls, message: Any) -> bool:
        """Whether the message ends the conversation (tau2's own rule)."""
        return bool(UserSimulator.is_stop(message))

    def set_seed(self, seed: int) -> None:
        """It does not sample."""


class ScriptedUser(_ModelFreeUser):
    """The scripted user (see :mod:`toolaudit.probes.agents.script`)."""

    def __init__(self, cursor: Cursor) -> None:
        super().__init__(instructions=None, llm=None)
        self.cursor = cursor

    def generate_next_message(self, message: Any, state: UserState) -> tuple[Any, UserState]:  # type: ignore[override]
        """The scripted user's next move as a user message."""
        move = user_turn(self.cursor)
        if isinstance(move, ToolUse):
            call = ToolCall(
                id=f"script_{len(self.cursor.calls)}",
                name=move.name,
                arguments=move.arguments,
                requestor="user",
            )
            return UserMessage(role="user", tool_calls=[call], cost=0.0), state
        return UserMessage(role="user", content=move.text, cost=0.0), state


class InstructedUser(_ModelFreeUser):
    """A user with no model for an agent of the user's own: it states the task's
    instructions, then asks it to go ahead, then ends the conversation (``###STOP###``)."""

    def __init__(self, instructions: str) -> None:
        super().__init__(instructions=instructions, llm=None)
        self.replies = 0

    def generate_next_message(self, message: Any, state: UserState) -> tuple[Any, UserState]:  # type: ignore[override]
        """The instructions first, then "please go ahead", then the stop."""
        self.replies += 1
        if self.replies == 1:
            text = str(self.instructions)
        elif self.replies == 2:
            text = "Please go ahead."
        else:
            text = "###STOP###"
        return UserMessage(role="user", content=text, cost=0.0), state


def register_scripted() -> None:
    """Register the scripted agents in tau2's registry (``toolaudit_careful``...)."""
    from toolaudit.probes.agents.script import SCRIPTED

    for name in SCRIPTED:
        key = f"toolaudit_{name}"
        if key not in _REGISTRY.get_agents():
            _REGISTRY.register_agent(ScriptedAgent, key)


# -- a toolaudit model behind tau2's agent and user ------------------------------------
def chat_turns(messages: list[Any]) -> list[ChatTurn]:
    """tau2 messages in the OpenAI chat layout toolaudit's models render."""
    names: dict[str, str] = {}
    turns: list[ChatTurn] = []
    for m in messages:
        if isinstance(m, SystemMessage):
            turns.append({"role": "system", "content": m.content or ""})
        elif isinstance(m, ToolMessage):
            turns.append(
                {
                    "role": "tool",
                    "tool_call_id": m.id,
                    "name": names.get(m.id, ""),
                    "content": m.content or "",
                }
            )
        elif m.role == "assistant" and m.tool_calls:
            for c in m.tool_calls:
                names[c.id] = c.name
            turns.append(
                {
                    "role": "assistant",
                    "content": m.content or "",
                    "tool_calls": [
                        {
                            "id": c.id,
                            "type": "function",
                            "function": {"name": c.name, "arguments": dict(c.arguments)},
                        }
                        for c in m.tool_calls
                    ],
                }
            )
        else:
            turns.append({"role": m.role, "content": m.content or ""})
    return turns


def tool_specs(tools: list[Any] | None) -> list[ToolSpec] | None:
    """tau2 tools as OpenAI function schemas (as shown: their own names)."""
    if not tools:
        return None
    return [t.openai_schema for t in tools]


class Speaker:
    """One side's model: generates a reply and turns it into tau2 message fields.

    Args:
        lm: the loaded toolaudit model.
        spec: its spec (recorded on each message's ``raw_data``).
        temperature: sampling temperature (0: greedy).
        max_tokens: the most tokens per reply.
        seed: the first generation's seed (then seed + 1, ...).
        requestor: ``assistant`` or ``user`` (who makes the tool calls).
    """

    def __init__(
        self,
        lm: LanguageModel,
        spec: str,
        *,
        temperature: float,
        max_tokens: int,
        seed: int,
        requestor: str,
    ) -> None:
        self.lm = lm
        self.spec = spec
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.seed = seed
        self.requestor = requestor
        self.generations = 0
        self.parse_errors = 0

    def reply(self, messages: list[Any], tools: list[Any] | None) -> dict[str, Any]:
        """The fields of the reply message (content, tool_calls, usage, raw_data)."""
        turns = chat_turns(messages)
        specs = tool_specs(tools)
        seed = (self.seed + self.generations) % (2**31)
        self.generations += 1
        n = self.generations
        gen = self.lm.generate(
            turns, specs, max_tokens=self.max_tokens, temperature=self.temperature, seed=seed
        )
        calls = [
            ToolCall(
                id=f"call_{n}_{i}",
                name=c.name,
                arguments=dict(c.arguments),
                requestor=self.requestor,
            )  # fmt: skip
            for i, c in enumerate(gen.tool_calls)
        ]
        calls += [
            ToolCall(id=f"unparsed_{n}_{i}", name=UNPARSED, arguments={}, requestor=self.requestor)
            for i, _ in enumerate(gen.parse_errors)
        ]
        self.parse_errors += len(gen.parse_errors)
        text = (gen.text or "").strip()
        empty = not text and not calls
        return {
            "content": text or ("(empty reply)" if empty else None),
            "tool_calls": calls or None,
            "cost": 0.0,
            "usage": _usage(self.lm, turns, specs, gen.raw),
            "raw_data": {
                "model": self.spec,
                "raw": gen.raw,
                "parse_errors": list(gen.parse_errors),
                "finish_reason": gen.finish_reason,
                "temperature": self.temperature,
                "seed": seed,
                "empty_reply": empty,
            },
        }


def _usage(lm: LanguageModel, turns: list[ChatTurn], specs: Any, raw: str) -> dict[str, Any]:
    """Prompt and completion tokens where the model has a local tokenizer."""
    encode = getattr(lm, "encode_context", None)
    out: dict[str, Any] = {"prompt_tokens": None, "completion_tokens": None}
    if not callable(encode):
        return out
    try:
        out["prompt_tokens"] = len(encode(lm.render(turns, specs)))
        out["completion_tokens"] = len(encode(raw))
    except Exception:  # a backend without a template or tokenizer: usage stays unknown
        pass
    return out


class ModelAgent(LLMAgent):  # type: ignore[misc]  # tau2 ships no type information
    """tau2's ``LLMAgent`` driven by a toolaudit model (see the module docstring)."""

    def __init__(self, tools: list[Any], domain_policy: str, *, speaker: Speaker) -> None:
        super().__init__(tools=tools, domain_policy=domain_policy, llm=speaker.spec)
        self.speaker = speaker

    def generate_next_message(self, message: Any, state: Any) -> tuple[Any, Any]:
        """tau2's own state handling; the reply from the toolaudit model."""
        if isinstance(message, MultiToolMessage):
            state.messages.extend(message.tool_messages)
        else:
            state.messages.append(message)
        fields = self.speaker.reply(state.system_messages + state.messages, self.tools)
        reply = AssistantMessage(role="assistant", **fields)
        state.messages.append(reply)
        return reply, state

    def set_seed(self, seed: int) -> None:
        """The seed is the speaker's (set per run by the harness)."""


class ModelUser(UserSimulator):  # type: ignore[misc]  # tau2 ships no type information
    """tau2's ``UserSimulator`` driven by a toolaudit model (see the module docstring)."""

    def __init__(self, *, instructions: Any, tools: list[Any] | None, speaker: Speaker) -> None:
        super().__init__(tools=tools, instructions=instructions, llm=speaker.spec)
        self.speaker = speaker

    def _generate_next_message(self, message: Any, state: Any) -> tuple[Any, Any]:
        if isinstance(message, MultiToolMessage):
            state.messages.extend(message.tool_messages)
        else:
            state.messages.append(message)
        fields = self.speaker.reply(state.system_messages + state.flip_roles(), self.tools)
        reply = UserMessage(role="user", **fields)
        state.messages.append(reply)
        return reply, state

    def set_seed(self, seed: int) -> None:
        """The seed is the speaker's (set per run by the harness)."""

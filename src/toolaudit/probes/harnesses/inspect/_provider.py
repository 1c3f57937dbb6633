"""toolaudit's models as an Inspect AI model provider (``toolaudit/SPEC``).

Registered with Inspect under the name ``toolaudit`` (on import, and through the
``inspect_ai`` entry point, so ``inspect eval --model toolaudit/llama:qwen`` works too).
Messages and tools reach the model as data; the model's own chat template renders them
and toolaudit's tool-call parser reads its reply (:meth:`toolaudit.models.LanguageModel.generate`),
the same parsing the ResearchOps LLM agent uses, instead of Inspect's tool emulation. A
call the parser cannot read is kept on the message as Inspect's ``ToolCall.parse_error``
(Inspect then tells the model its call failed), never dropped.

Model arguments (``get_model("toolaudit/llama:qwen", cache_role="user", temperature=0.7,
seed=5)``): ``cache_role`` keeps one loaded model per role (the agent's and the user simulator's prompt
caches stay apart), ``temperature`` overrides the task's own sampling temperature (tau2
fixes 0.0; a study that wants identical reruns to be able to differ samples instead, and
records it), ``seed`` seeds the first generation (then seed + 1, ...), ``max_tokens``
caps each reply.
"""

from __future__ import annotations

import time
from typing import Any

from inspect_ai.model import (
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageTool,
    GenerateConfig,
    ModelAPI,
    ModelOutput,
    ModelUsage,
    modelapi,
)
from inspect_ai.tool import ToolCall, ToolChoice, ToolInfo

from toolaudit.models import CapabilityError, ChatTurn, LanguageModel, ToolSpec, load_model
from toolaudit.probes._mutations import UNPARSED

PROVIDER = "toolaudit"
_LOADED: dict[tuple[str, str], LanguageModel] = {}


def loaded_model(spec: str, role: str) -> LanguageModel:
    """One loaded model per (spec, role) per process."""
    key = (spec, role)
    if key not in _LOADED:
        _LOADED[key] = load_model(spec)
    return _LOADED[key]


def chat_turns(messages: list[ChatMessage]) -> list[ChatTurn]:
    """Inspect messages in the OpenAI chat layout toolaudit's models render."""
    turns: list[ChatTurn] = []
    for m in messages:
        if isinstance(m, ChatMessageTool):
            text = m.text or (m.error.message if m.error is not None else "")
            turns.append(
                {
                    "role": "tool",
                    "tool_call_id": m.tool_call_id or "",
                    "name": m.function or "",
                    "content": text,
                }
            )
        elif isinstance(m, ChatMessageAssistant) and m.tool_calls:
            turns.append(
                {
                    "role": "assistant",
                    "content": m.text or "",
                    "tool_calls": [
                        {
                            "id": c.id,
                            "type": "function",
                            "function": {"name": c.function, "arguments": dict(c.arguments)},
                        }
                        for c in m.tool_calls
                    ],
                }
            )
        else:
            turns.append({"role": m.role, "content": m.text})
    return turns


def tool_specs(tools: list[ToolInfo]) -> list[ToolSpec]:
    """Inspect tool descriptions as OpenAI function schemas."""
    return [
        {
            "type": "function",
            "function": {
                "name": t.name,
                "description": t.description,
                "parameters": t.parameters.model_dump(exclude_none=True),
            },
        }
        for t in tools
    ]


def _count(lm: LanguageModel, text: str) -> int | None:
    encode = getattr(lm, "encode_context", None)
    if not callable(encode):
        return None
    try:
        return len(encode(text))
    except Exception:  # a backend without a local tokenizer: usage stays unknown
        return None


def _prompt_tokens(lm: LanguageModel, turns: list[ChatTurn], specs: Any) -> int | None:
    try:
        text = lm.render(turns, specs)
    except CapabilityError:  # a backend without a template (py:): usage stays unknown
        return None
    return _count(lm, text)


@modelapi(name=PROVIDER)
class ToolauditModelAPI(ModelAPI):
    """A toolaudit model spec behind Inspect's ``ModelAPI`` (see the module docstring)."""

    def __init__(
        self,
        model_name: str,
        base_url: str | None = None,
        api_key: str | None = None,
        config: GenerateConfig | None = None,
        **model_args: Any,
    ) -> None:
        super().__init__(model_name, base_url, api_key, [], config or GenerateConfig())
        self.spec = model_name
        self.role = str(model_args.get("cache_role", "agent"))
        temp = model_args.get("temperature")
        self.sampling = None if temp is None else float(temp)
        self.first_seed = int(model_args.get("seed", 0))
        self.reply_tokens = int(model_args.get("max_tokens", 256))
        self.n_generated = 0

    def max_connections(self) -> int:
        """One request at a time: a local model uses every core already."""
        return 1

    async def generate(
        self,
        input: list[ChatMessage],
        tools: list[ToolInfo],
        tool_choice: ToolChoice,
        config: GenerateConfig,
    ) -> ModelOutput:
        """One reply: rendered by the model's template, tool calls parsed by toolaudit."""
        import anyio

        lm = loaded_model(self.spec, self.role)
        turns = chat_turns(input)
        specs = tool_specs(tools) or None
        temperature = (
            self.sampling if self.sampling is not None else float(config.temperature or 0.0)
        )
        seed = (self.first_seed + self.n_generated) % (2**31)
        self.n_generated += 1
        max_tokens = int(config.max_tokens or self.reply_tokens)
        start = time.perf_counter()

        def run() -> Any:
            gen = lm.generate(
                turns, specs, max_tokens=max_tokens, temperature=temperature, seed=seed
            )
            return gen, _prompt_tokens(lm, turns, specs)

        gen, n_in = await anyio.to_thread.run_sync(run)
        seconds = time.perf_counter() - start
        # ids unique within the conversation (the parser numbers calls per reply)
        calls = [
            ToolCall(
                id=f"call_{self.n_generated}_{i}", function=c.name, arguments=dict(c.arguments)
            )
            for i, c in enumerate(gen.tool_calls)
        ]
        calls += [
            ToolCall(
                id=f"unparsed_{self.n_generated}_{i}",
                function=UNPARSED,
                arguments={},
                parse_error=err,
            )
            for i, err in enumerate(gen.parse_errors)
        ]
        n_out = _count(lm, gen.raw)
        message = ChatMessageAssistant(
            content=gen.text or "",
            tool_calls=calls or None,
            model=self.spec,
            source="generate",
        )
        return ModelOutput.from_message(
            message,
            stop_reason="tool_calls"
            if calls
            else ("max_tokens" if gen.finish_reason == "length" else "stop"),
        ).model_copy(
            update={
                "model": self.spec,
                "usage": ModelUsage(
                    input_tokens=n_in or 0,
                    output_tokens=n_out or 0,
                    total_tokens=(n_in or 0) + (n_out or 0),
                ),
                "time": seconds,
                "metadata": {
                    "raw": gen.raw,
                    "parse_errors": list(gen.parse_errors),
                    "temperature": temperature,
                    "seed": seed,
                },
            }
        )

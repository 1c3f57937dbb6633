"""The ``llm`` policy: a language model acting on ResearchOps through ``toolaudit.models``.

The model sees the rubric and the task in its own chat template with the tools as OpenAI
function schemas (``lm.generate(messages, tools)``), calls tools until it submits a report
or runs out of steps, and samples at a set temperature with a per-run seed, so that two
identical reruns (the ``repeat`` condition) can differ for real. A tool call the model
writes but the parser cannot read is never dropped: it is counted, kept in the record's
``source.agent_info.parse_errors`` with the raw text, and the model is told it failed.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from typing import Any

from toolaudit.models import ChatTurn, ToolSpec
from toolaudit.probes.agents._view import TaskView

logger = logging.getLogger(__name__)

Call = Callable[[str, dict[str, Any]], tuple[str, bool]]
DEFAULT_MODEL = "embedded:qwen"
DEFAULT_TEMPERATURE = 0.7
DEFAULT_MAX_STEPS = 10
SYSTEM = (
    "You are a research-operations assistant. Use the tools to do the task, one tool call "
    "at a time, and finish by calling the tool that submits the report. Do not guess values "
    "you can look up."
)
_MODELS: dict[str, Any] = {}


def shared_model(spec: str) -> Any:
    """One loaded model per spec per process (workers load their own)."""
    if spec not in _MODELS:
        from toolaudit.models import load_model

        _MODELS[spec] = load_model(spec)
    return _MODELS[spec]


def tool_schemas(view: TaskView) -> list[ToolSpec]:
    """The shown tools as OpenAI function schemas."""
    return [
        {
            "type": "function",
            "function": {
                "name": t.name,
                "description": t.description,
                "parameters": {
                    "type": "object",
                    "properties": t.parameters,
                    "required": [k for k in t.parameters if k in ("query", "dataset_id")],
                },
            },
        }
        for t in view.tools
    ]


def _submit_tool(view: TaskView) -> str | None:
    # Descriptions stay true to the operation under every mutation, names may not.
    return next((t.name for t in view.tools if t.description.startswith("Submit")), None)


class LLMAgent:
    """A model-driven ResearchOps policy (see the module docstring).

    Args:
        model: a ``toolaudit.models`` spec (``embedded:qwen``, ``openai:MODEL@URL``, ...).
        temperature: sampling temperature (0 = greedy).
        max_steps: the most generations per run.
        max_tokens: the most new tokens per generation.
        loader: builds the model from its spec (``toolaudit.models.load_model``, cached).
    """

    name = "llm"

    def __init__(
        self,
        model: str = DEFAULT_MODEL,
        *,
        temperature: float = DEFAULT_TEMPERATURE,
        max_steps: int = DEFAULT_MAX_STEPS,
        max_tokens: int = 128,
        loader: Callable[[str], Any] | None = None,
    ) -> None:
        self.model = model
        self.temperature = temperature
        self.max_steps = max_steps
        self.max_tokens = max_tokens
        self.loader = loader
        self.seed = 0
        self.run_info: dict[str, Any] = {}

    def reset(self, seed: int) -> None:
        """Set this run's sampling seed (the harness derives it from the run's config)."""
        self.seed = seed

    def run(self, view: TaskView, call: Call) -> str:
        """Act on the task through ``call``; returns the model's last text."""
        lm = (self.loader or shared_model)(self.model)
        clear = getattr(lm, "clear_cache", None)
        if callable(clear):  # each run starts from the same cache state: reruns are exact
            clear()
        tools = tool_schemas(view)
        submit = _submit_tool(view)
        messages: list[ChatTurn] = [
            {"role": "system", "content": f"{SYSTEM}\n{view.rubric}"},
            {"role": "user", "content": view.prompt},
        ]
        info: dict[str, Any] = {
            "model": getattr(lm, "identity", self.model),
            "temperature": self.temperature,
            "seed": self.seed,
            "generations": 0,
            "parse_errors": [],
            "finish_reasons": [],
            "submitted": False,
            "hit_step_limit": False,
        }
        final = ""
        for step in range(self.max_steps):
            gen = lm.generate(
                messages,
                tools,
                max_tokens=self.max_tokens,
                temperature=self.temperature,
                seed=(self.seed + step) % (2**31),
            )
            info["generations"] += 1
            info["finish_reasons"].append(gen.finish_reason)
            for err in gen.parse_errors:
                info["parse_errors"].append({"step": step, "error": err, "raw": gen.raw[:400]})
            final = gen.text
            if gen.tool_calls:
                messages.append(
                    {
                        "role": "assistant",
                        "content": gen.text or "",
                        "tool_calls": [
                            {
                                "id": tc.id,
                                "type": "function",
                                "function": {"name": tc.name, "arguments": dict(tc.arguments)},
                            }
                            for tc in gen.tool_calls
                        ],
                    }
                )
                for tc in gen.tool_calls:
                    text, _ = call(tc.name, dict(tc.arguments))
                    messages.append({"role": "tool", "tool_call_id": tc.id, "content": text})
                    info["submitted"] = info["submitted"] or tc.name == submit
                if info["submitted"]:
                    break
            elif gen.parse_errors:
                messages.append({"role": "assistant", "content": gen.raw})
                messages.append(
                    {
                        "role": "user",
                        "content": "That tool call could not be read ("
                        + "; ".join(gen.parse_errors)
                        + "). Reply with exactly one tool call.",
                    }
                )
            else:
                break  # the model answered without a tool call: the run ends there
        else:
            info["hit_step_limit"] = True
        self.run_info = info
        return final


def llm_factory(
    model: str = DEFAULT_MODEL,
    *,
    temperature: float = DEFAULT_TEMPERATURE,
    max_steps: int = DEFAULT_MAX_STEPS,
) -> Callable[[], LLMAgent]:
    """A picklable zero-argument factory of :class:`LLMAgent` (for ``agents=``)."""
    return functools.partial(LLMAgent, model, temperature=temperature, max_steps=max_steps)

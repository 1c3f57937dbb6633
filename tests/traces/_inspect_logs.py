"""Inspect AI logs written by inspect_ai itself, from tasks with tools run on Inspect's
mock model (``mockllm``), for the reader's tests. No network, no real model.

Task ``a`` (3 samples x 3 epochs): every run's first assistant turn makes two tool calls
(``lookup`` and ``add``); sample ``s2`` then calls ``lookup`` with a key that does not
exist, which fails (a ``ToolError``: a tool message with an error); sample ``s3``
answers wrongly (score ``I``).
Task ``b`` (same samples): ``s2`` calls a tool that crashes (a sample error) and ``s3``
keeps calling ``add`` until the task's message limit stops it; ``s1`` as in ``a``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

KEYS = {"alpha": "1", "beta": "2", "gamma": "3"}
TARGETS = [("s1", "alpha", "1"), ("s2", "beta", "2"), ("s3", "gamma", "9")]
EPOCHS = 3
MESSAGE_LIMIT = 8


def _tools() -> tuple[Any, Any, Any]:
    from inspect_ai.tool import ToolError, tool

    @tool
    def lookup() -> Any:
        async def execute(key: str) -> str:
            """Look up the value stored under a key.

            Args:
                key: the key to look up
            """
            if key not in KEYS:
                raise ToolError(f"no such key: {key}")
            return KEYS[key]

        return execute

    @tool
    def add() -> Any:
        async def execute(a: int, b: int) -> int:
            """Add two integers.

            Args:
                a: first number
                b: second number
            """
            return a + b

        return execute

    @tool
    def explode() -> Any:
        async def execute(x: str) -> str:
            """A tool whose implementation crashes.

            Args:
                x: anything
            """
            raise RuntimeError("tool crashed")

        return execute

    return lookup, add, explode


def _output(message_or_call: Any) -> Any:
    from inspect_ai.model import ModelUsage

    out = message_or_call
    out.usage = ModelUsage(input_tokens=10, output_tokens=5, total_tokens=15)  # no tokenizer
    return out


def _policy_a(input: list[Any], *_: Any) -> Any:
    from inspect_ai.model import ChatCompletionChoice, ChatMessageAssistant, ModelOutput
    from inspect_ai.tool import ToolCall

    key = next(m.text for m in input if m.role == "user").split()[-1]
    turns = sum(m.role == "assistant" for m in input)
    if turns == 0:
        message = ChatMessageAssistant(
            content="",
            tool_calls=[
                ToolCall(id="c0a", function="lookup", arguments={"key": key}),
                ToolCall(id="c0b", function="add", arguments={"a": 2, "b": 3}),
            ],
            model="mockllm/model",
            source="generate",
        )
        return _output(
            ModelOutput(
                model="mockllm/model",
                choices=[ChatCompletionChoice(message=message, stop_reason="tool_calls")],
            )
        )
    if key == "beta" and turns == 1:
        return _output(
            ModelOutput.for_tool_call(
                "mockllm/model", "lookup", {"key": "delta"}, tool_call_id="c1"
            )
        )
    answer = next(m.text for m in input if m.role == "tool")
    return _output(ModelOutput.from_content("mockllm/model", f"The answer is {answer}"))


def _policy_b(input: list[Any], *rest: Any) -> Any:
    from inspect_ai.model import ModelOutput

    key = next(m.text for m in input if m.role == "user").split()[-1]
    turns = sum(m.role == "assistant" for m in input)
    if key == "gamma":
        return _output(
            ModelOutput.for_tool_call(
                "mockllm/model", "add", {"a": 1, "b": turns}, tool_call_id=f"g{turns}"
            )
        )
    if key == "beta":
        return _output(
            ModelOutput.for_tool_call("mockllm/model", "explode", {"x": "y"}, tool_call_id="e0")
        )
    return _policy_a(input, *rest)


def write_logs(log_dir: Path) -> dict[str, Path]:
    """Run both tasks once on the mock model; returns ``{"a": .eval, "b": .eval,
    "a_json": .json}`` (the JSON log is ``a`` written again by inspect as JSON)."""
    from inspect_ai import Task
    from inspect_ai import eval as inspect_eval
    from inspect_ai.dataset import Sample
    from inspect_ai.log import write_eval_log
    from inspect_ai.model import get_model
    from inspect_ai.scorer import includes
    from inspect_ai.solver import generate, use_tools

    lookup, add, explode = _tools()
    dataset = [Sample(id=sid, input=f"find {key}", target=t) for sid, key, t in TARGETS]
    a = Task(
        name="a",
        dataset=dataset,
        solver=[use_tools(lookup(), add()), generate()],
        scorer=includes(),
        epochs=EPOCHS,
        model=get_model("mockllm/model", custom_outputs=_policy_a),
    )
    b = Task(
        name="b",
        dataset=dataset,
        solver=[use_tools(lookup(), add(), explode()), generate()],
        scorer=includes(),
        epochs=EPOCHS,
        model=get_model("mockllm/model", custom_outputs=_policy_b),
        message_limit=MESSAGE_LIMIT,
        fail_on_error=False,
    )
    logs = inspect_eval([a, b], log_dir=str(log_dir), log_format="eval", display="none")
    paths = {log.eval.task: Path(log.location) for log in logs}
    a_json = log_dir / "a.json"
    write_eval_log(logs[0], str(a_json), format="json")
    return {"a": paths["a"], "b": paths["b"], "a_json": a_json}

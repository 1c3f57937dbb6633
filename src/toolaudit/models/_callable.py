"""Plain Python callable backend (``py:module:function``).

``function(prompts) -> list[str]`` completes raw prompts; it may also accept
``max_tokens`` and ``stop`` keywords. Optional attributes add capabilities:
``function.loglikelihood(requests) -> list[list[float]]`` scores, and
``function.chat(messages, tools) -> str`` replies to a chat (the reply's tool calls are
parsed like any model's).
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable, Sequence
from typing import Any

from toolaudit.errors import ModelError
from toolaudit.models._base import (
    ChatTurn,
    Generation,
    NoChat,
    ToolSpec,
    checked_logprobs,
    cut_at_stop,
    unsupported,
)
from toolaudit.models._toolcalls import parse_tool_calls


class CallableModel(NoChat):
    """A Python function behind the :class:`LanguageModel` interface (no ``render``)."""

    no_render = (
        "a Python function has no chat template; give it a 'chat(messages, tools)' "
        "attribute to reply to chats, or load hf:PATH to render one"
    )

    def __init__(self, fn: Callable[..., Sequence[str]], *, name: str) -> None:
        self.fn = fn
        self.name = name

    @property
    def identity(self) -> str:
        """``py:module:function`` plus the function's own ``version`` attribute if any."""
        version = getattr(self.fn, "version", None)
        return f"py:{self.name}" + (f"@{version}" if version is not None else "")

    @property
    def capabilities(self) -> frozenset[str]:
        """``loglikelihood`` with a ``loglikelihood`` attribute; ``generate`` and ``tools``
        with a ``chat`` attribute."""
        caps = set()
        if callable(getattr(self.fn, "loglikelihood", None)):
            caps.add("loglikelihood")
        if callable(getattr(self.fn, "chat", None)):
            caps |= {"generate", "tools"}
        return frozenset(caps)

    def complete(
        self, prompts: Sequence[str], *, max_tokens: int = 32, stop: Sequence[str] = ()
    ) -> list[str]:
        """Call the function on the prompts; cut each answer at the first stop string."""
        try:
            params = inspect.signature(self.fn).parameters
        except (TypeError, ValueError):
            params = {}  # type: ignore[assignment]
        kwargs: dict[str, Any] = {}
        if "max_tokens" in params:
            kwargs["max_tokens"] = max_tokens
        if "stop" in params:
            kwargs["stop"] = tuple(stop)
        out = list(self.fn(list(prompts), **kwargs))
        if len(out) != len(prompts) or not all(isinstance(t, str) for t in out):
            raise ModelError(f"{self.identity} must return one string per prompt")
        return [cut_at_stop(t, stop) for t in out]

    def loglikelihood(self, requests: Sequence[tuple[str, str]]) -> list[list[float]]:
        """Delegate to ``function.loglikelihood`` when the function has one."""
        scorer = getattr(self.fn, "loglikelihood", None)
        if scorer is None:
            raise unsupported(
                self.identity,
                "score",
                "the function has no 'loglikelihood' attribute; give it "
                "'loglikelihood(requests) -> list[list[float]]'",
            )
        out = list(scorer(list(requests)))
        if len(out) != len(requests):
            raise ModelError(f"{self.identity}.loglikelihood must return one list per request")
        return checked_logprobs(f"{self.identity}.loglikelihood", requests, out)

    def generate(
        self,
        messages: Sequence[ChatTurn],
        tools: Sequence[ToolSpec] | None = None,
        *,
        max_tokens: int = 256,
        temperature: float = 0.0,
        seed: int | None = None,
        stop: Sequence[str] = (),
    ) -> Generation:
        """``function.chat(messages, tools)``'s reply, cut at ``stop``, tool calls parsed."""
        chat = getattr(self.fn, "chat", None)
        if chat is None:
            raise unsupported(
                self.identity,
                "generate a chat reply",
                "the function has no 'chat' attribute; give it 'chat(messages, tools) -> str'",
            )
        raw = chat([dict(m) for m in messages], list(tools or []))
        if not isinstance(raw, str):
            raise ModelError(f"{self.identity}.chat must return a string")
        raw = cut_at_stop(raw, stop)
        parsed = parse_tool_calls(raw)
        return Generation(
            text=parsed.text,
            tool_calls=parsed.tool_calls,
            raw=raw,
            parse_errors=parsed.parse_errors,
            finish_reason="tool_calls" if parsed.tool_calls else "stop",
        )


def load_callable(target: str, **options: Any) -> CallableModel:
    """Registry factory for ``py:module:function``."""
    module_name, _, attr = target.rpartition(":")
    if not module_name or not attr:
        raise ModelError(f"py: spec must be py:module:function; got 'py:{target}'")
    if module_name.startswith(".") or not all(p.isidentifier() for p in module_name.split(".")):
        raise ModelError(
            f"py: {module_name!r} is not an absolute module name (py:package.module:function)"
        )
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ModelError(f"py: cannot import module {module_name!r}: {exc}") from None
    fn = getattr(module, attr, None)
    if not callable(fn):
        raise ModelError(f"py: {module_name!r} has no callable {attr!r}")
    return CallableModel(fn, name=target, **options)

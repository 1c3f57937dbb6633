"""The narrow model interface every model-facing audit uses, and its small value types."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import (
    TYPE_CHECKING,
    Any,
    ClassVar,
    Literal,
    Protocol,
    Required,
    TypedDict,
    runtime_checkable,
)

from toolaudit.errors import ConfigError, ModelError

if TYPE_CHECKING:
    from toolaudit.traces import ToolCall

Capability = Literal["loglikelihood", "render", "generate", "tools"]
CAPABILITIES: tuple[str, ...] = ("loglikelihood", "render", "generate", "tools")
Truncate = Literal["error", "left", "middle"]
TRUNCATE: tuple[str, ...] = ("error", "left", "middle")
FinishReason = Literal["stop", "length", "tool_calls"]


class ChatTurn(TypedDict, total=False):
    """One chat message as the model layer takes it, in the OpenAI chat layout every
    chat template reads: ``role`` and ``content``, plus ``tool_calls`` on an assistant
    turn that calls tools and ``tool_call_id`` / ``name`` on a tool's result."""

    role: Required[str]
    content: str | None
    tool_calls: list[dict[str, Any]]
    tool_call_id: str
    name: str


class FunctionSpec(TypedDict, total=False):
    """A tool's name, description and JSON-schema ``parameters``."""

    name: Required[str]
    description: str
    parameters: dict[str, Any]


class ToolSpec(TypedDict):
    """One tool schema in the OpenAI layout: ``{"type": "function", "function": ...}``."""

    type: Literal["function"]
    function: FunctionSpec


def check_temperature(name: str, value: float) -> None:
    """A sampling temperature must lie in [0, 2], the OpenAI API's range (NaN and
    infinities fail): a ConfigError naming the setting otherwise.

    >>> check_temperature("temperature", 2.5)
    Traceback (most recent call last):
    toolaudit.errors.ConfigError: invalid temperature=2.5; allowed: a number in [0, 2]
    """
    if not 0.0 <= value <= 2.0:
        raise ConfigError.invalid(name, "a number in [0, 2]", value)


class ContextLengthError(ModelError, ValueError):
    """A context is longer than the model's window and no truncation was asked for."""


class CapabilityError(ModelError, NotImplementedError):
    """The backend cannot do what was asked (e.g. a chat-only API cannot score a prompt)."""


@dataclass(frozen=True, slots=True)
class Generation:
    """One generated reply: its text, the tool calls parsed from it, and what failed.

    ``text`` is the reply with tool-call markup removed; ``raw`` the exact decoded text;
    ``parse_errors`` one line per call-shaped fragment that could not be parsed (never
    silently dropped); ``finish_reason`` is ``stop``, ``length`` or ``tool_calls``.
    """

    text: str
    tool_calls: tuple[ToolCall, ...] = ()
    raw: str = ""
    parse_errors: tuple[str, ...] = ()
    finish_reason: str = "stop"

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (for caches and results files)."""
        return {
            "text": self.text,
            "tool_calls": [c.model_dump() for c in self.tool_calls],
            "raw": self.raw,
            "parse_errors": list(self.parse_errors),
            "finish_reason": self.finish_reason,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Generation:
        """Inverse of :meth:`to_dict`."""
        from toolaudit.traces import ToolCall

        return cls(
            text=str(data["text"]),
            tool_calls=tuple(ToolCall.model_validate(c) for c in data.get("tool_calls", [])),
            raw=str(data.get("raw", "")),
            parse_errors=tuple(data.get("parse_errors", [])),
            finish_reason=str(data.get("finish_reason", "stop")),
        )


@runtime_checkable
class LanguageModel(Protocol):
    """Load once, then render chats, score continuations and generate replies.

    ``identity`` names the backend, the exact model and every option that changes a
    score (it is the cache key); it never contains secrets such as API keys.
    ``capabilities`` says which of ``loglikelihood``, ``render``, ``generate`` and
    ``tools`` work; a method outside them raises :class:`CapabilityError` in one line.
    """

    @property
    def identity(self) -> str:  # pragma: no cover - protocol
        """Backend, model and score-changing options, e.g. ``embedded:qwen-…[float32]``."""
        ...

    @property
    def capabilities(self) -> frozenset[str]:  # pragma: no cover - protocol
        """Subset of ``{"loglikelihood", "render", "generate", "tools"}``."""
        ...

    def loglikelihood(self, requests: Sequence[tuple[str, str]]) -> list[list[float]]:
        """Per-token natural-log probabilities of each continuation given its context."""
        ...

    def render(
        self,
        messages: Sequence[ChatTurn],
        tools: Sequence[ToolSpec] | None = None,
        *,
        add_generation_prompt: bool = True,
    ) -> str:
        """The exact text the model sees for a chat (its own template, tools included)."""
        ...

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
        """The model's reply to a chat, with tool calls parsed."""
        ...

    def complete(
        self, prompts: Sequence[str], *, max_tokens: int = 32, stop: Sequence[str] = ()
    ) -> list[str]:
        """Greedy raw-text completions of each prompt, cut at the first stop string."""
        ...


def render_user_turn(lm: LanguageModel, text: str) -> str:
    """``text`` as one user turn in ``lm``'s own chat template, ready for the assistant's
    reply (how ``--chat`` scores or completes a raw prompt); a model that cannot render a
    chat raises its one-line :class:`CapabilityError`."""
    return lm.render([{"role": "user", "content": text}])


def cut_at_stop(text: str, stop: Sequence[str]) -> str:
    """Truncate ``text`` at the earliest stop string (the stop string itself is dropped);
    every backend applies this so that stop handling is identical across backends."""
    cut = len(text)
    for s in stop:
        if s:
            k = text.find(s)
            if k != -1:
                cut = min(cut, k)
    return text[:cut]


def checked_logprobs(
    source: str, requests: Sequence[tuple[str, str]], scores: Sequence[Sequence[float]]
) -> list[list[float]]:
    """Log-probabilities read from outside the process (a server, a cache, a user's
    function), checked where they enter: one list per request, finite, at most 0 (a
    tolerance of 1e-6 for float rounding), and non-empty for a non-empty continuation.
    Anything else raises :class:`ModelError` in one line naming ``source`` and the
    request; nothing impossible reaches a reading.

    >>> checked_logprobs("srv", [("a", " b")], [[-0.5]])
    [[-0.5]]
    >>> checked_logprobs("srv", [("a", " b")], [[5.0]])
    Traceback (most recent call last):
    ...
    toolaudit.errors.ModelError: srv: log-probability 5.0 at token 0 of request 0 is above 0 (a log-probability is at most 0)
    """
    import math

    if len(scores) != len(requests):
        raise ModelError(f"{source}: {len(scores)} score lists for {len(requests)} requests")
    out = []
    for i, ((_, cont), row) in enumerate(zip(requests, scores, strict=True)):
        try:
            values = [float(v) for v in row]
        except (TypeError, ValueError):
            raise ModelError(f"{source}: request {i}: log-probabilities are not numbers") from None
        if cont and not values:
            raise ModelError(
                f"{source}: request {i}: no log-probability for a non-empty continuation"
            )
        for j, v in enumerate(values):
            if not math.isfinite(v):
                raise ModelError(
                    f"{source}: log-probability {v} at token {j} of request {i} is not finite"
                )
            if v > 1e-6:
                raise ModelError(
                    f"{source}: log-probability {v} at token {j} of request {i} is above 0 "
                    "(a log-probability is at most 0)"
                )
        out.append(values)
    return out


def unsupported(identity: str, what: str, why: str) -> CapabilityError:
    """The one-line error of a backend asked for a capability it lacks."""
    return CapabilityError(f"{identity}: cannot {what}: {why}")


class NoChat:
    """Mixin for a backend that lacks ``render`` (and, unless it defines its own,
    ``generate``): each raises :class:`CapabilityError` in one line naming the model,
    what it cannot do and what to do instead.

    A subclass sets ``no_render`` and ``no_generate`` (why, and what to do) and defines
    ``identity``.
    """

    no_render: ClassVar[str] = "it has no chat template; load a chat model (e.g. embedded:qwen)"
    no_generate: ClassVar[str] = "it has no chat template; load a chat model (e.g. embedded:qwen)"

    @property
    def identity(self) -> str:  # pragma: no cover - defined by every backend
        raise NotImplementedError

    def render(
        self,
        messages: Sequence[ChatTurn],
        tools: Sequence[ToolSpec] | None = None,
        *,
        add_generation_prompt: bool = True,
    ) -> str:
        """Not available for this backend (see ``no_render``)."""
        raise unsupported(self.identity, "render a chat", self.no_render)

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
        """Not available for this backend (see ``no_generate``)."""
        raise unsupported(self.identity, "generate a chat reply", self.no_generate)

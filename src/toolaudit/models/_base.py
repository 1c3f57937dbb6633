"""The narrow model interface every model-facing audit uses."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable


@runtime_checkable
class LanguageModel(Protocol):
    """Score continuations and generate text.

    ``identity`` names the backend and the exact model (used as a cache key); it never
    contains secrets such as API keys.
    """

    @property
    def identity(self) -> str:  # pragma: no cover - protocol
        """Backend and model identity, e.g. ``hf:/path@sha256:...``."""
        ...

    def loglikelihood(self, requests: Sequence[tuple[str, str]]) -> list[list[float]]:
        """Per-token log-probabilities (natural log) of each continuation given its context."""
        ...

    def generate(
        self, prompts: Sequence[str], *, max_tokens: int = 32, stop: Sequence[str] = ()
    ) -> list[str]:
        """Greedy (deterministic) completions of each prompt."""
        ...


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

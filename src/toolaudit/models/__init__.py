"""Model adapters: one narrow interface (log-likelihood, generation), several backends.

Backends are chosen by a spec string (``embedded``, ``hf:PATH_OR_ID``,
``openai:MODEL@URL``, ``sklearn:FILE``, ``py:module:function``) through
:func:`load_model`; each backend module is imported only when its name is used.
"""

from toolaudit.models._base import LanguageModel
from toolaudit.models._cache import CachedModel, ResponseCache, request_key
from toolaudit.models._compare import ScoreAgreement, compare_models, score_agreement
from toolaudit.models._embedded import (
    cache_root,
    embedded_gguf_path,
    embedded_model_dir,
    gemma_chat,
    load_causal_lm,
)
from toolaudit.models._registry import BACKENDS, ModelSpec, load_model, parse_spec
from toolaudit.models._sklearn import (
    SklearnModel,
    example_text,
    option_logprob,
    save_pipeline,
    train_controlled_model,
)

__all__ = [
    "BACKENDS",
    "CachedModel",
    "LanguageModel",
    "ModelSpec",
    "ResponseCache",
    "ScoreAgreement",
    "SklearnModel",
    "cache_root",
    "compare_models",
    "embedded_gguf_path",
    "embedded_model_dir",
    "example_text",
    "gemma_chat",
    "load_causal_lm",
    "load_model",
    "option_logprob",
    "parse_spec",
    "request_key",
    "save_pipeline",
    "score_agreement",
    "train_controlled_model",
]

"""Model adapters: the one place a model is loaded, rendered, scored and asked to act.

Backends are chosen by a spec string (``embedded`` / ``embedded:qwen`` /
``embedded:gemma``, ``hf:PATH_OR_ID``, ``openai:MODEL@URL``, ``sklearn:FILE``,
``py:module:function``) through :func:`load_model`; each backend module is imported only
when its name is used.
"""

from toolaudit.models._actions import CALL_OPENERS, CallReply, call_reply_probabilities
from toolaudit.models._base import (
    TRUNCATE,
    CapabilityError,
    ChatTurn,
    ContextLengthError,
    FunctionSpec,
    Generation,
    LanguageModel,
    ToolSpec,
    check_temperature,
    render_user_turn,
)
from toolaudit.models._cache import CachedModel
from toolaudit.models._compare import (
    ScoreAgreement,
    compare_models,
)
from toolaudit.models._embedded import (
    DEFAULT_EMBEDDED,
    EMBEDDED,
    embedded_gguf_path,
    embedded_model_dir,
    embedded_status,
    verify_prepared,
)
from toolaudit.models._messages import check_messages
from toolaudit.models._registry import (
    ModelSpec,
    check_model,
    load_model,
    parse_spec,
    split_options,
)
from toolaudit.models._sklearn import (
    SklearnModel,
    example_text,
    save_pipeline,
    train_controlled_model,
)
from toolaudit.models._toolcalls import (
    ParsedCalls,
    parse_tool_calls,
)

__all__ = [
    "check_temperature",
    "ChatTurn",
    "FunctionSpec",
    "ToolSpec",
    "CALL_OPENERS",
    "DEFAULT_EMBEDDED",
    "EMBEDDED",
    "TRUNCATE",
    "CachedModel",
    "CallReply",
    "CapabilityError",
    "ContextLengthError",
    "Generation",
    "LanguageModel",
    "ModelSpec",
    "ParsedCalls",
    "ScoreAgreement",
    "SklearnModel",
    "call_reply_probabilities",
    "check_messages",
    "check_model",
    "compare_models",
    "embedded_gguf_path",
    "embedded_model_dir",
    "embedded_status",
    "verify_prepared",
    "render_user_turn",
    "example_text",
    "load_model",
    "parse_spec",
    "split_options",
    "parse_tool_calls",
    "save_pipeline",
    "train_controlled_model",
]

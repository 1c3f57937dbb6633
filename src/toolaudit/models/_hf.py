"""Hugging Face ``transformers`` causal-LM backend (``hf:PATH_OR_ID``, ``embedded[:NAME]``).

Scoring tokenizes the context (with the tokenizer's special tokens, so a ``<bos>`` leads
where the model uses one) and the continuation separately (without special tokens) and
scores exactly the continuation's tokens: the same continuation gives the same tokens
under any context. A token is never merged across the boundary (put the leading space
in the continuation, e.g. ``" Paris"``).

Contexts go through :class:`~toolaudit.models._prefix.PrefixScorer`: contexts sharing a
token prefix run it once, also across calls (a least-recently-used store of caches), and
the output layer runs only where a log-probability is read. A context over the window
raises :class:`ContextLengthError` unless ``truncate`` is ``left`` or ``middle``.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from toolaudit.errors import MissingDependencyError, ModelError
from toolaudit.models._assemble import file_sha256
from toolaudit.models._base import ChatTurn, Generation, ToolSpec, unsupported
from toolaudit.models._context import TruncationCounter, check_truncate, fit_context
from toolaudit.models._template import normalize_messages

logger = logging.getLogger(__name__)


def _path_digest(path: str) -> str:
    """A fingerprint of a local model folder: SHA-256 over the bytes of its config,
    tokenizer and weight files, so a corrupted or swapped weight file (same name, same
    size) changes the model identity, and with it every cache key and result record.

    Reads the weights once per process (they are read to load the model anyway)."""
    p = Path(path)
    if not p.is_dir():
        return "hub"
    h = hashlib.sha256()
    for f in sorted(p.iterdir()):
        # training.json records how a folder was made (timings included), not the model
        if f.name == "training.json":
            continue
        if f.is_file() and f.suffix in {".safetensors", ".bin", ".json", ".model", ".gguf"}:
            h.update(f"{f.name}:{file_sha256(f)}".encode())
    return h.hexdigest()[:16]


class HFModel:
    """A local ``transformers`` causal LM behind the :class:`LanguageModel` interface.

    Args:
        path: local folder or HF id; ``None``, ``"embedded"`` or ``"embedded:NAME"`` is an
            embedded model (``qwen``, the default, or ``gemma``).
        device: ``cpu``, ``cuda``, ``cuda:1``...; default picks a GPU when there is one.
        dtype: ``float32`` or ``bfloat16``...; default float32 on CPU, bfloat16 on a GPU.
        batch_size: prompts per forward pass in :meth:`complete` (scoring runs one token
            trie per call).
        max_length: the window in tokens; default the model's ``max_position_embeddings``.
        truncate: ``error`` (default): an over-window context raises; ``left`` or
            ``middle``: cut it and count it in :attr:`truncations`.
        max_states: contexts whose key/value caches are kept for reuse.

    The constructor loads nothing; the model loads on first use.

    Example:
        >>> lm = HFModel("embedded:qwen")  # doctest: +SKIP
        >>> lm.loglikelihood([("The capital of France is", " Paris")])  # doctest: +SKIP
    """

    def __init__(
        self,
        path: str | None = None,
        *,
        device: str | None = None,
        dtype: str | None = None,
        batch_size: int = 8,
        max_length: int | None = None,
        truncate: str = "error",
        max_states: int = 8,
    ) -> None:
        self.path = path
        self.device = device
        self.dtype = dtype
        self.batch_size = int(batch_size)
        self.max_length = int(max_length) if max_length is not None else None
        self.truncate = check_truncate(truncate)
        self.max_states = int(max_states)
        self.truncations = TruncationCounter()
        self._model: Any = None
        self._tok: Any = None
        self._scorer: Any = None
        self._identity: str | None = None
        self._window: int | None = None
        self._enc: dict[str, list[int]] = {}

    @classmethod
    def from_loaded(cls, model: Any, tokenizer: Any, *, identity: str, **options: Any) -> HFModel:
        """Wrap an already loaded ``(model, tokenizer)`` pair (for example a test fixture);
        ``identity`` names the model and the options are appended as usual."""
        self = cls(None, **options)
        self._model, self._tok = model, tokenizer
        self._prepare_tokenizer()
        self._identity = identity + self._option_suffix(model.config, model.dtype)
        return self

    # -- naming --------------------------------------------------------------------
    @property
    def _embedded_name(self) -> str | None:
        p = self.path
        if p in (None, "", "embedded"):
            from toolaudit.models._embedded import DEFAULT_EMBEDDED

            return DEFAULT_EMBEDDED
        if p is not None and p.startswith("embedded:"):
            return p.partition(":")[2]
        return None

    @property
    def spec(self) -> str:
        """The spec string this model was built from (``embedded:qwen``, ``hf:PATH``)."""
        name = self._embedded_name
        return f"embedded:{name}" if name else f"hf:{self.path}"

    def _folder(self) -> str:
        name = self._embedded_name
        if name is None:
            return str(self.path)
        from toolaudit.models._embedded import embedded_model_dir

        return str(embedded_model_dir(name))

    def _resolved_device(self) -> str:
        if self.device:
            return self.device
        import torch

        return "cuda" if torch.cuda.is_available() else "cpu"

    def _resolved_dtype(self) -> str:
        if self.dtype:
            return self.dtype
        return "bfloat16" if self._resolved_device().startswith("cuda") else "float32"

    def _option_suffix(self, config: Any, dtype: Any) -> str:
        window = self.max_length or int(getattr(config, "max_position_embeddings", 2048))
        self._window = window
        name = str(dtype).removeprefix("torch.")
        return f"[{name},window={window},truncate={self.truncate}]"

    @property
    def identity(self) -> str:
        """``embedded:STEM-DIGEST[...]`` or ``hf:PATH@DIGEST[...]``; the bracket holds every
        option that changes a score: dtype, window and truncation policy."""
        if self._identity is None:
            folder = self._folder()
            name = self._embedded_name
            base = (
                f"embedded:{Path(folder).name}"
                if name
                else f"hf:{self.path}@{_path_digest(folder)}"
            )
            config = self._config(folder)
            self._identity = base + self._option_suffix(config, self._resolved_dtype())
        return self._identity

    def _config(self, folder: str) -> Any:
        from transformers import AutoConfig

        try:
            return AutoConfig.from_pretrained(folder)
        except (OSError, ValueError) as exc:
            raise ModelError(self._load_problem(exc)) from None

    def _load_problem(self, exc: Exception) -> str:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else "(no message)"
        return (
            f"{self.spec}: cannot load the model ({type(exc).__name__}: {first}); give a "
            "local folder with "
            "config.json, tokenizer and weights (or a hub id where a hub is reachable)"
        )

    @property
    def window(self) -> int:
        """The context window in tokens (``max_length`` or the model's own)."""
        if self._window is None:
            _ = self.identity
        assert self._window is not None
        return self._window

    # -- loading -------------------------------------------------------------------
    def _load(self) -> tuple[Any, Any]:
        if self._model is None:
            from toolaudit.models._embedded import load_causal_lm

            folder = self._folder()
            _ = self.identity
            try:
                model, tok = load_causal_lm(
                    folder, device=self._resolved_device(), dtype=self._resolved_dtype()
                )
            except ModelError:
                raise
            except Exception as exc:  # truncated weights, a malformed tokenizer file...
                raise ModelError(self._load_problem(exc)) from None
            _check_loaded(model, tok, self.spec)
            self._model, self._tok = model, tok
            self._prepare_tokenizer()
            logger.info("loaded %s", self.identity)
        return self._model, self._tok

    def _prepare_tokenizer(self) -> None:
        from toolaudit.models._gemma import install_gemma_template

        if self._tok is not None and install_gemma_template(self._tok):
            logger.debug("%s: no chat template; using Gemma's plain turn format", self.spec)

    @property
    def model(self) -> Any:
        """The loaded ``transformers`` model (loads on first access)."""
        return self._load()[0]

    @property
    def tokenizer(self) -> Any:
        """The loaded tokenizer (loads on first access)."""
        return self._load()[1]

    @property
    def scorer(self) -> Any:
        """The :class:`PrefixScorer` holding this model's cached contexts."""
        if self._scorer is None:
            from toolaudit.models._prefix import PrefixScorer

            self._scorer = PrefixScorer(self._load()[0], max_states=self.max_states)
        return self._scorer

    def clear_cache(self) -> None:
        """Forget every cached context. Results never depend on the cache beyond float
        rounding; a caller that needs bit-identical reruns whatever ran before (an agent
        run among parallel ones) clears it first."""
        if self._scorer is not None:
            self._scorer.clear()

    @property
    def capabilities(self) -> frozenset[str]:
        """``loglikelihood`` always; ``render``/``generate`` with a chat template;
        ``tools`` when that template renders tools."""
        _, tok = self._load()
        template = getattr(tok, "chat_template", None) or "" if tok is not None else ""
        caps = {"loglikelihood"}
        if template:
            caps |= {"render", "generate"}
            if "tools" in template:
                caps.add("tools")
        return frozenset(caps)

    # -- chat ----------------------------------------------------------------------
    def render(
        self,
        messages: Sequence[ChatTurn],
        tools: Sequence[ToolSpec] | None = None,
        *,
        add_generation_prompt: bool = True,
    ) -> str:
        """The chat as the model sees it, through the tokenizer's own chat template."""
        _, tok = self._load()
        if not getattr(tok, "chat_template", None):
            raise unsupported(
                self.identity,
                "render a chat",
                "its tokenizer has no chat template; use a model that has one "
                "(e.g. embedded:qwen) or score raw text",
            )
        kwargs: dict[str, Any] = {"tokenize": False, "add_generation_prompt": add_generation_prompt}
        if tools:
            kwargs["tools"] = list(tools)
        return str(tok.apply_chat_template(normalize_messages(messages), **kwargs))

    def encode_context(self, text: str) -> list[int]:
        """Token ids of a context: special tokens added (a ``<bos>`` leads where the model
        uses one, never twice); an empty context becomes ``<bos>`` (or ``<eos>``)."""
        ids = self._enc.get(text)
        if ids is not None:
            return ids
        _, tok = self._load()
        bos = tok.bos_token
        special = not (bos and text.startswith(bos))
        ids = list(tok(text, add_special_tokens=special)["input_ids"])
        if not ids:
            lead = tok.bos_token_id if tok.bos_token_id is not None else tok.eos_token_id
            if lead is None:
                raise ModelError(f"{self.identity}: empty context and no <bos> or <eos> token")
            ids = [int(lead)]
        if len(self._enc) > 4096:
            self._enc.clear()
        self._enc[text] = ids
        return ids

    def encode_continuation(self, text: str) -> list[int]:
        """Token ids of a continuation (no special tokens)."""
        _, tok = self._load()
        return list(tok(text, add_special_tokens=False)["input_ids"])

    def fit(self, ids: list[int], extra: int) -> list[int]:
        """Apply the context policy to a context with ``extra`` tokens after it."""
        _, tok = self._load()
        bos = getattr(tok, "bos_token_id", None)
        fitted, cut = fit_context(
            ids,
            extra,
            window=self.window,
            truncate=self.truncate,
            model=self.identity,
            keep_first=bos is not None and ids[:1] == [bos],
        )
        if cut:
            self.truncations.contexts += 1
            self.truncations.tokens += cut
            logger.info("%s: cut %d context tokens (%s)", self.identity, cut, self.truncate)
        return fitted

    # -- scoring -------------------------------------------------------------------
    def loglikelihood(self, requests: Sequence[tuple[str, str]]) -> list[list[float]]:
        """Per-token natural-log probabilities of each continuation given its context.

        All requests of one call form one token trie: every shared token prefix runs
        once, whatever the order (see the module docstring), and a request repeated in
        one call is scored once.
        """
        pairs = [(self.encode_context(c), self.encode_continuation(k)) for c, k in requests]
        return self.loglikelihood_tokens(pairs)

    def loglikelihood_tokens(
        self, requests: Sequence[tuple[Sequence[int], Sequence[int]]]
    ) -> list[list[float]]:
        """:meth:`loglikelihood` on token ids (context ids as the model should see them)."""
        pairs = []
        for ctx_ids, cont_ids in requests:
            cont = list(cont_ids)
            pairs.append((self.fit(list(ctx_ids), len(cont)), cont))
        return self.scorer.score_requests(pairs)

    # -- generation ----------------------------------------------------------------
    def complete(
        self, prompts: Sequence[str], *, max_tokens: int = 32, stop: Sequence[str] = ()
    ) -> list[str]:
        """Greedy raw-text completions (left-padded batches), cut at the first stop string."""
        from toolaudit.models._hf_generate import complete

        return complete(self, list(prompts), max_tokens=max_tokens, stop=stop)

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
        """The model's reply to a chat (rendered with its template), tool calls parsed.

        ``temperature`` 0 is greedy; above 0 samples, reproducibly for a given ``seed``.
        """
        from toolaudit.models._hf_generate import generate

        prompt = self.render(messages, tools)
        return generate(
            self, prompt, max_tokens=max_tokens, temperature=temperature, seed=seed, stop=stop
        )


def load_hf(target: str, **options: Any) -> HFModel:
    """Registry factory for ``hf:PATH_OR_ID``."""
    _require_transformers()
    if not target:
        raise ModelError("hf: spec needs a path or id, e.g. hf:/models/my-model")
    if not Path(target).exists() and (target.startswith(("/", ".", "~")) or target.count("/") != 1):
        raise ModelError(
            f"hf:{target}: no such model folder; give a local folder with config.json, "
            "tokenizer and weights (or an org/name hub id where a hub is reachable)"
        )
    return HFModel(target, **options)


def load_embedded(target: str, **options: Any) -> HFModel:
    """Registry factory for ``embedded`` (Qwen), ``embedded:qwen`` and ``embedded:gemma``."""
    from toolaudit.models._embedded import embedded_entry

    _require_transformers()
    entry = embedded_entry(target or None)
    return HFModel(f"embedded:{entry.name}", **options)


def _require_transformers() -> None:
    try:
        import torch  # noqa: F401
        import transformers  # noqa: F401
    except ImportError:
        raise MissingDependencyError("transformers", "models") from None


#: The text a freshly loaded model reads once, to prove its tokenizer and weights work.
PROBE_TEXT = "The capital of France is Paris."


def _check_loaded(model: Any, tok: Any, spec: str) -> None:
    """Refuse a model whose tokenizer turns text into no tokens, or whose weights give
    non-finite logits on :data:`PROBE_TEXT` (a damaged or truncated prepared folder would
    otherwise score every continuation as 0 tokens, or as NaN)."""
    import torch

    ids = tok(PROBE_TEXT, add_special_tokens=False)["input_ids"]
    size = len(tok) if hasattr(tok, "__len__") else None
    rows = int(model.get_input_embeddings().weight.shape[0])
    if size is not None and size > rows:
        raise ModelError(
            f"{spec}: its tokenizer has {size:,} tokens but the model's embedding has "
            f"{rows:,} rows: the tokenizer belongs to another model (a token id past the "
            "table would fail mid-run); give the folder the model was saved with"
        )
    if not ids:
        raise ModelError(
            f"{spec}: its tokenizer turns text into no tokens; the model folder is damaged "
            "(for an embedded model, rebuild it with: toolaudit models prepare --force)"
        )
    device = next(model.parameters()).device
    with torch.no_grad():
        logits = model(torch.tensor([ids], device=device)).logits
    if not bool(torch.isfinite(logits).all()):
        raise ModelError(
            f"{spec}: its weights give non-finite logits on a probe text; the model folder "
            "is damaged (for an embedded model, rebuild it with: toolaudit models prepare "
            "--force)"
        )

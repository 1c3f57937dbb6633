"""Hugging Face ``transformers`` causal-LM backend (``hf:PATH_OR_ID`` and ``embedded``).

Scoring tokenizes the context (with the tokenizer's special tokens, so ``<bos>`` leads)
and the continuation separately (without special tokens) and scores exactly the
continuation's tokens. This keeps the scored tokens identical whatever the context is,
at the price of not merging a token across the context/continuation boundary (put the
space at the start of the continuation, e.g. ``(" Paris")``, as the usual convention).

Batches are right-padded for scoring (every row keeps positions 0..n-1, and causal
attention never lets a real token see padding) and left-padded for generation. The
262k-token output layer dominates the cost on the small embedded model, so the
transformer body runs once and the output layer is applied only at the positions whose
next token is a continuation token.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from toolaudit.errors import MissingDependencyError, ModelError
from toolaudit.models._base import cut_at_stop
from toolaudit.models._embedded import END, gemma_chat

logger = logging.getLogger(__name__)


def _path_digest(path: str) -> str:
    """A cheap fingerprint of a local model folder (config text, weight names and sizes)."""
    p = Path(path)
    if not p.is_dir():
        return "hub"
    h = hashlib.sha256()
    for f in sorted(p.iterdir()):
        if f.name == "config.json":
            h.update(f.read_bytes())
        elif f.suffix in {".safetensors", ".bin", ".json", ".model"}:
            h.update(f"{f.name}:{f.stat().st_size}".encode())
    return h.hexdigest()[:16]


class HFModel:
    """A local ``transformers`` causal LM behind the :class:`LanguageModel` interface.

    Args:
        path: HF id or local folder; ``None`` means the embedded Gemma 3 270M.
        device: ``cpu``, ``cuda``...; default picks a GPU when there is one.
        batch_size: rows per forward pass.
        chat: render each prompt/context as one user turn in the model's chat format
            (the tokenizer's template when it has one, else Gemma's turn format) and
            treat the continuation/generation as the model's reply.
        max_length: longest token sequence; contexts are cut from the left to fit.

    The constructor loads nothing; the model loads on first use.

    Example:
        >>> lm = HFModel(None)  # doctest: +SKIP
        >>> lm.loglikelihood([("The capital of France is", " Paris")])  # doctest: +SKIP
    """

    def __init__(
        self,
        path: str | None = None,
        *,
        device: str | None = None,
        batch_size: int = 8,
        chat: bool = False,
        max_length: int = 2048,
    ) -> None:
        self.path = path
        self.device = device
        self.batch_size = int(batch_size)
        self.chat = bool(chat)
        self.max_length = int(max_length)
        self._model: Any = None
        self._tok: Any = None
        self._identity: str | None = None

    @classmethod
    def from_loaded(
        cls, model: Any, tokenizer: Any, *, identity: str, batch_size: int = 8, chat: bool = False
    ) -> HFModel:
        """Wrap an already loaded ``(model, tokenizer)`` pair (for example a test fixture)."""
        self = cls(None, batch_size=batch_size, chat=chat)
        self._model, self._tok = model, tokenizer
        self._identity = identity + (":chat" if chat else "")
        return self

    # -- loading ---------------------------------------------------------------------
    @property
    def identity(self) -> str:
        """``hf:PATH@fingerprint`` (``:chat`` appended in chat mode)."""
        if self._identity is None:
            if self.path in (None, "", "embedded"):
                from toolaudit.models._embedded import embedded_model_dir

                base = f"embedded:{embedded_model_dir().name}"
            else:
                base = f"hf:{self.path}@{_path_digest(str(self.path))}"
            self._identity = base + (":chat" if self.chat else "")
        return self._identity

    def _load(self) -> tuple[Any, Any]:
        if self._model is None:
            from toolaudit.models._embedded import load_causal_lm

            self._model, self._tok = load_causal_lm(self.path, device=self.device)
            logger.info("loaded %s", self.identity)
        return self._model, self._tok

    # -- chat ------------------------------------------------------------------------
    def render(self, text: str) -> str:
        """The exact text the model sees for a prompt (chat-wrapped in chat mode)."""
        if not self.chat:
            return text
        return self.render_messages([{"role": "user", "content": text}])

    def render_messages(self, messages: Sequence[dict[str, str]]) -> str:
        """Render chat messages with the tokenizer's template, or Gemma's turn format."""
        _, tok = self._load()
        if getattr(tok, "chat_template", None):
            return str(
                tok.apply_chat_template(list(messages), tokenize=False, add_generation_prompt=True)
            )
        return gemma_chat(messages)

    def _encode_context(self, text: str) -> list[int]:
        _, tok = self._load()
        bos = tok.bos_token
        # A chat template may already start with <bos>; do not add a second one.
        special = not (bos and text.startswith(bos))
        ids: list[int] = tok(text, add_special_tokens=special)["input_ids"]
        if not ids:
            lead = tok.bos_token_id if tok.bos_token_id is not None else tok.eos_token_id
            if lead is None:
                raise ModelError("empty context and the tokenizer has neither <bos> nor <eos>")
            ids = [lead]
        return ids

    # -- scoring ---------------------------------------------------------------------
    def loglikelihood(self, requests: Sequence[tuple[str, str]]) -> list[list[float]]:
        """Per-token natural-log probabilities of each continuation given its context.

        Requests that share a context (answer options after one prompt, say) run the
        context once and score all their continuations on copies of its key/value cache.
        """
        model, tok = self._load()
        rows: list[tuple[list[int], int]] = []  # (ids, number of continuation tokens)
        by_context: dict[tuple[int, ...], list[int]] = {}
        for i, (context, continuation) in enumerate(requests):
            ctx = self._encode_context(self.render(context))
            cont: list[int] = tok(continuation, add_special_tokens=False)["input_ids"]
            ids = (ctx + cont)[-self.max_length :]
            rows.append((ids, len(cont)))
            if cont and len(ctx) + len(cont) <= self.max_length:
                by_context.setdefault(tuple(ctx), []).append(i)
        out: list[list[float] | None] = [None] * len(rows)
        for ctx_key, members in by_context.items():
            if len(members) < 2:
                continue
            conts = [rows[i][0][len(ctx_key) :] for i in members]
            for i, s in zip(members, self._score_shared(model, list(ctx_key), conts), strict=True):
                out[i] = s
        rest = [i for i in range(len(rows)) if out[i] is None]
        order = sorted(rest, key=lambda i: -len(rows[i][0]))
        for start in range(0, len(order), self.batch_size):
            chunk = order[start : start + self.batch_size]
            scores = self._score_batch(model, [rows[i] for i in chunk])
            for i, s in zip(chunk, scores, strict=True):
                out[i] = s
        return [s if s is not None else [] for s in out]

    def _log_softmax_head(self, model: Any, hidden: Any, targets: Any) -> list[float]:
        import torch

        logits = model.get_output_embeddings()(hidden).float()
        cap = getattr(model.config, "final_logit_softcapping", None)
        if cap is not None:
            logits = torch.tanh(logits / cap) * cap
        logp = torch.log_softmax(logits, dim=-1)
        return logp.gather(1, targets[:, None])[:, 0].tolist()

    def _score_shared(
        self, model: Any, ctx: list[int], conts: Sequence[list[int]]
    ) -> list[list[float]]:
        """Score several continuations of one context: the context runs once; each batch
        of continuations runs on a copy of its cache (right-padded, which cannot change
        earlier positions of a causal model)."""
        import copy

        import torch
        from transformers import DynamicCache

        dev = next(model.parameters()).device
        with torch.inference_mode():
            cache = DynamicCache(config=model.config)
            ctx_hidden = model.base_model(
                input_ids=torch.tensor([ctx], device=dev), cache=cache, use_cache=True
            ).last_hidden_state[0, -1:]
            results: list[list[float]] = []
            for start in range(0, len(conts), self.batch_size):
                chunk = conts[start : start + self.batch_size]
                width = max(len(c) for c in chunk)
                x = torch.tensor([c + [0] * (width - len(c)) for c in chunk], device=dev)
                fork = copy.copy(cache)
                fork.layers = [copy.copy(layer) for layer in cache.layers]
                fork.batch_repeat_interleave(len(chunk))
                hidden = model.base_model(input_ids=x, cache=fork, use_cache=True).last_hidden_state
                for b, c in enumerate(chunk):
                    h = torch.cat([ctx_hidden, hidden[b, : len(c) - 1]])
                    targets = torch.tensor(c, device=dev)
                    results.append(self._log_softmax_head(model, h, targets))
        return results

    def _score_batch(self, model: Any, rows: Sequence[tuple[list[int], int]]) -> list[list[float]]:
        import torch

        width = max(len(ids) for ids, _ in rows)
        pad = 0
        input_ids = torch.full((len(rows), width), pad, dtype=torch.long)
        mask = torch.zeros((len(rows), width), dtype=torch.long)
        for r, (ids, _) in enumerate(rows):
            input_ids[r, : len(ids)] = torch.tensor(ids)
            mask[r, : len(ids)] = 1
        dev = next(model.parameters()).device
        with torch.inference_mode():
            hidden = model.base_model(
                input_ids=input_ids.to(dev), attention_mask=mask.to(dev)
            ).last_hidden_state
            results: list[list[float]] = []
            for r, (ids, n_cont) in enumerate(rows):
                if n_cont == 0:
                    results.append([])
                    continue
                n = len(ids)
                # Position t predicts token t+1: the continuation occupies n-n_cont..n-1.
                target = torch.tensor(ids[n - n_cont :], device=dev)
                results.append(
                    self._log_softmax_head(model, hidden[r, n - n_cont - 1 : n - 1], target)
                )
        return results

    # -- generation ------------------------------------------------------------------
    def generate(
        self, prompts: Sequence[str], *, max_tokens: int = 32, stop: Sequence[str] = ()
    ) -> list[str]:
        """Greedy completions (left-padded batches), cut at the first stop string."""
        import torch

        model, tok = self._load()
        encoded = [self._encode_context(self.render(p))[-self.max_length :] for p in prompts]
        eos = [tok.eos_token_id] if tok.eos_token_id is not None else []
        end_id = tok.convert_tokens_to_ids(END) if self.chat else None
        if isinstance(end_id, int) and end_id != tok.unk_token_id:
            eos.append(end_id)
        pad_id = tok.pad_token_id if tok.pad_token_id is not None else (eos[0] if eos else 0)
        dev = next(model.parameters()).device
        out: list[str] = [""] * len(prompts)
        order = sorted(range(len(encoded)), key=lambda i: -len(encoded[i]))
        for start in range(0, len(order), self.batch_size):
            chunk = order[start : start + self.batch_size]
            width = max(len(encoded[i]) for i in chunk)
            ids = torch.full((len(chunk), width), pad_id, dtype=torch.long)
            mask = torch.zeros((len(chunk), width), dtype=torch.long)
            for r, i in enumerate(chunk):
                seq = encoded[i]
                ids[r, width - len(seq) :] = torch.tensor(seq)
                mask[r, width - len(seq) :] = 1
            extra: dict[str, Any] = {}
            if any(stop):  # stop early once every row has hit a stop string
                extra = {"stop_strings": [x for x in stop if x], "tokenizer": tok}
            with torch.inference_mode():
                gen = model.generate(
                    input_ids=ids.to(dev),
                    attention_mask=mask.to(dev),
                    max_new_tokens=max_tokens,
                    do_sample=False,
                    temperature=None,
                    top_p=None,
                    top_k=None,
                    eos_token_id=eos or None,
                    pad_token_id=pad_id,
                    **extra,
                )
            for r, i in enumerate(chunk):
                text = tok.decode(gen[r, width:], skip_special_tokens=True)
                out[i] = cut_at_stop(text, stop)
        return out


def load_hf(target: str, **options: Any) -> HFModel:
    """Registry factory for ``hf:PATH_OR_ID``."""
    _require_transformers()
    if not target:
        raise ModelError("hf: spec needs a path or id, e.g. hf:google/gemma-3-270m")
    return HFModel(target, **options)


def load_embedded(target: str, **options: Any) -> HFModel:
    """Registry factory for ``embedded`` (Gemma 3 270M base from PyPI)."""
    _require_transformers()
    return HFModel(None, **options)


def _require_transformers() -> None:
    try:
        import torch  # noqa: F401
        import transformers  # noqa: F401
    except ImportError:
        raise MissingDependencyError("transformers", "models") from None

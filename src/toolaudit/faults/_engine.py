"""Log-probability backends over segment lists: a KV-cached one and the naive one.

Both answer the same two questions: the per-token log-probabilities of a target segment
after a list of prefix segments, and the total log-probability of each of several
candidate segments after a prefix. ``CachedScorer`` keeps the key/value cache of every
recent prefix (keyed by a hash chain over its segments), extends the longest stored one,
scores candidates in one batch on a copy of the cache, and applies the output layer only
at the positions it scores. ``NaiveScorer`` runs every question as a full forward pass
from the first token with full output logits; it is the independent check.
"""

from __future__ import annotations

import copy
import hashlib
import logging
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class LMState:
    """A prefix processed by the model: its cache, the last hidden state, its length."""

    cache: Any
    last_hidden: Any
    length: int


def _chain(segments: Sequence[str]) -> list[bytes]:
    keys, h = [], b""
    for seg in segments:
        h = hashlib.sha1(h + b"\x00" + seg.encode("utf-8")).digest()
        keys.append(h)
    return keys


class _TokenizerMixin:
    tokenizer: Any
    _enc: dict[str, list[int]]

    def encode(self, segment: str) -> list[int]:
        """Token ids of one segment (no special tokens added; cached)."""
        ids = self._enc.get(segment)
        if ids is None:
            ids = list(self.tokenizer(segment, add_special_tokens=False)["input_ids"])
            if not ids:
                raise ValueError(f"segment tokenizes to nothing: {segment!r}")
            self._enc[segment] = ids
        return ids

    def sequence(self, segments: Sequence[str]) -> list[int]:
        """``<bos>`` followed by every segment's tokens."""
        out = [int(self.tokenizer.bos_token_id)]
        for seg in segments:
            out.extend(self.encode(seg))
        return out


class CachedScorer(_TokenizerMixin):
    """KV-cache reuse across arms, candidates and later steps (see module docstring).

    Args:
        model: a Hugging Face causal LM (``model.model`` body, output embeddings).
        tokenizer: its tokenizer.
        max_states: how many recent prefix states to keep (plus pinned one-segment ones).
        block: positions per output-layer block (bounds memory).
    """

    def __init__(
        self, model: Any, tokenizer: Any, *, max_states: int = 16, block: int = 256
    ) -> None:
        self.model, self.tokenizer = model, tokenizer
        self.max_states, self.block = max_states, block
        self._enc = {}
        self._states: OrderedDict[bytes, LMState] = OrderedDict()
        self._pinned: dict[bytes, LMState] = {}
        self._root: LMState | None = None
        self.tokens_run = 0
        self.positions_scored = 0

    # -- model plumbing ------------------------------------------------------------------
    def _body(self) -> Any:
        return getattr(self.model, self.model.base_model_prefix)

    def _logprobs_at(self, hidden: Any, targets: Any) -> Any:
        """log P(target | hidden) for aligned rows, output layer only on these rows."""
        import torch

        head = self.model.get_output_embeddings()
        cap = getattr(self.model.config, "final_logit_softcapping", None)
        with torch.no_grad():
            return self._head_blocks(head, cap, hidden, targets)

    def _head_blocks(self, head: Any, cap: float | None, hidden: Any, targets: Any) -> Any:
        import torch

        out = []
        for i in range(0, hidden.shape[0], self.block):
            logits = head(hidden[i : i + self.block]).float()
            if cap:
                logits = torch.tanh(logits / cap) * cap
            lp = torch.log_softmax(logits, dim=-1)
            out.append(lp.gather(-1, targets[i : i + self.block, None])[:, 0])
        self.positions_scored += int(hidden.shape[0])
        return torch.cat(out)

    @staticmethod
    def _fork(cache: Any) -> Any:
        new = copy.copy(cache)
        new.layers = [copy.copy(layer) for layer in cache.layers]
        return new

    def _run(self, state: LMState | None, ids: list[int]) -> tuple[LMState, Any]:
        import torch
        from transformers import DynamicCache

        cache = DynamicCache(config=self.model.config) if state is None else self._fork(state.cache)
        x = torch.tensor([ids], device=self.model.device)
        with torch.no_grad():
            h = self._body()(input_ids=x, cache=cache, use_cache=True).last_hidden_state[0]
        self.tokens_run += len(ids)
        base = 0 if state is None else state.length
        return LMState(cache, h[-1:], base + len(ids)), h

    def root(self) -> LMState:
        """The state after ``<bos>`` alone."""
        if self._root is None:
            self._root, _ = self._run(None, [int(self.tokenizer.bos_token_id)])
        return self._root

    # -- prefix store --------------------------------------------------------------------
    def _lookup(self, keys: list[bytes]) -> tuple[LMState, int]:
        for j in range(len(keys), 0, -1):
            k = keys[j - 1]
            if k in self._pinned:
                return self._pinned[k], j
            if k in self._states:
                self._states.move_to_end(k)
                return self._states[k], j
        return self.root(), 0

    def _store(self, key: bytes, state: LMState, *, n_segments: int) -> None:
        if n_segments == 1:
            self._pinned[key] = state
            return
        self._states[key] = state
        self._states.move_to_end(key)
        while len(self._states) > self.max_states:
            self._states.popitem(last=False)

    def _extend(
        self, segments: Sequence[str], *, score_last: bool
    ) -> tuple[LMState, np.ndarray | None]:
        """The state after all segments (stored), scoring the last segment if asked."""
        import torch

        keys = _chain(segments)
        state, j = self._lookup(keys)
        if j == len(segments) and not score_last:
            return state, None
        if j == len(segments):  # the target itself is stored: step back one segment
            state, j = self._lookup(keys[:-1])
        ids: list[int] = []
        bounds = []
        for seg in segments[j:]:
            tok = self.encode(seg)
            bounds.append((len(ids), len(ids) + len(tok)))
            ids.extend(tok)
        new, h = self._run(state, ids)
        self._store(keys[-1], new, n_segments=len(segments))
        if not score_last:
            return new, None
        lo, hi = bounds[-1]
        prev = torch.cat([state.last_hidden, h[:-1]])  # hidden that predicts position i
        targets = torch.tensor(ids[lo:hi], device=h.device)
        lp = self._logprobs_at(prev[lo:hi], targets)
        return new, lp.detach().cpu().double().numpy()

    # -- the two questions ---------------------------------------------------------------
    def prime(self, segments: Sequence[str]) -> None:
        """Run and store a prefix (one segment: pinned for the whole process)."""
        self._extend(list(segments), score_last=False)

    def seq_logprobs(self, prefix: Sequence[str], target: str) -> np.ndarray:
        """Per-token log-probabilities of ``target``'s tokens after ``prefix``."""
        _, lp = self._extend([*prefix, target], score_last=True)
        assert lp is not None
        return lp

    def candidate_logprobs(self, prefix: Sequence[str], candidates: Sequence[str]) -> list[float]:
        """Total log-probability of each candidate segment after ``prefix`` (one batch)."""
        import torch

        state, _ = self._extend(list(prefix), score_last=False)
        toks = [self.encode(c) for c in candidates]
        width = max(len(t) for t in toks)
        pad = int(self.tokenizer.pad_token_id or 0)
        x = torch.tensor([t + [pad] * (width - len(t)) for t in toks], device=self.model.device)
        cache = self._fork(state.cache)
        cache.batch_repeat_interleave(len(toks))
        with torch.no_grad():
            h = self._body()(input_ids=x, cache=cache, use_cache=True).last_hidden_state
        self.tokens_run += int(x.numel())
        rows, targets = [], []
        for b, t in enumerate(toks):
            rows.append(torch.cat([state.last_hidden, h[b, : len(t) - 1]]))
            targets.extend(t)
        lp = self._logprobs_at(torch.cat(rows), torch.tensor(targets, device=h.device))
        out, pos = [], 0
        for t in toks:
            out.append(float(lp[pos : pos + len(t)].sum()))
            pos += len(t)
        return out


class NaiveScorer(_TokenizerMixin):
    """Every question a full forward pass from ``<bos>`` with full output logits."""

    def __init__(self, model: Any, tokenizer: Any) -> None:
        self.model, self.tokenizer = model, tokenizer
        self._enc = {}
        self.tokens_run = 0

    def _full(self, segments: Sequence[str], n_target: int) -> np.ndarray:
        import torch

        ids = self.sequence(segments)
        x = torch.tensor([ids], device=self.model.device)
        with torch.no_grad():
            logits = self.model(input_ids=x).logits[0].float()
        self.tokens_run += len(ids)
        # The full logits are computed (the naive cost); only the target rows are normalized.
        lp = torch.log_softmax(logits[-n_target - 1 : -1], dim=-1)
        tgt = torch.tensor(ids[-n_target:], device=lp.device)
        return lp.gather(-1, tgt[:, None])[:, 0].cpu().double().numpy()

    def seq_logprobs(self, prefix: Sequence[str], target: str) -> np.ndarray:
        """Per-token log-probabilities of ``target`` after ``prefix``."""
        return self._full([*prefix, target], len(self.encode(target)))

    def candidate_logprobs(self, prefix: Sequence[str], candidates: Sequence[str]) -> list[float]:
        """Total log-probability of each candidate, one full forward pass each."""
        return [float(self._full([*prefix, c], len(self.encode(c))).sum()) for c in candidates]

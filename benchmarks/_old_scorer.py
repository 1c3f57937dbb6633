"""The faults benchmark's baseline: the model layer's scheduling before the one-trie
scorer (commit 3006d1d), kept verbatim so ``faults_speed.py`` can run both in one sitting.

Contexts were grouped per call and scored one context at a time: a least-recently-used
store of 8 caches, continuations that a later context extends run alone and kept, the
crop path re-running one token as a call of its own. Not used by toolaudit itself.
"""

from __future__ import annotations

import bisect
import copy
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from toolaudit.models._hf import HFModel


@dataclass(frozen=True, slots=True)
class _State:
    """A context run through the model: its cache and the hidden state of its last token."""

    cache: Any
    last_hidden: Any


def _common_prefix(a: Sequence[int], b: Sequence[int]) -> int:
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return i


class OldPrefixScorer:
    """KV-cache reuse across requests (see the module docstring).

    Args:
        model: a loaded Hugging Face causal LM (body at ``model.base_model``).
        max_states: contexts whose caches are kept (least recently used dropped first).
        batch_size: continuations per forward pass on one context.
        block: positions per output-layer block (bounds memory on large vocabularies).

    ``tokens_run`` counts token positions the transformer body computed and
    ``positions_scored`` the positions the output layer computed (for benchmarks).
    """

    def __init__(
        self, model: Any, *, max_states: int = 8, batch_size: int = 8, block: int = 256
    ) -> None:
        self.model = model
        self.max_states = max(1, int(max_states))
        self.batch_size = max(1, int(batch_size))
        self.block = max(1, int(block))
        self._states: OrderedDict[tuple[int, ...], _State] = OrderedDict()
        self.tokens_run = 0
        self.positions_scored = 0
        self.calls = 0

    # -- model plumbing --------------------------------------------------------------
    @property
    def _device(self) -> Any:
        return next(self.model.parameters()).device

    def _logprobs_at(self, hidden: Any, targets: Any) -> Any:
        """log P(target | hidden) for aligned rows; the output layer runs on these rows only."""
        import torch

        head = self.model.get_output_embeddings()
        cap = getattr(self.model.config, "final_logit_softcapping", None)
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

    def _run(self, state: _State | None, ids: Sequence[int]) -> tuple[_State, Any]:
        """Extend ``state`` (or nothing) by ``ids``; the new state and the ids' hidden states."""
        import torch
        from transformers import DynamicCache

        cache = DynamicCache() if state is None else self._fork(state.cache)
        x = torch.tensor([list(ids)], device=self._device)
        with torch.inference_mode():
            h = self.model.base_model(input_ids=x, cache=cache, use_cache=True)
        hidden = h.last_hidden_state[0]
        self.tokens_run += len(ids)
        self.calls += 1
        return _State(cache, hidden[-1:]), hidden

    # -- the store -------------------------------------------------------------------
    def _longest_stored(self, ids: Sequence[int]) -> tuple[int, _State | None]:
        """The stored state sharing the longest token prefix with ``ids``, cut to that
        prefix: ``(n, state)`` where ``state`` has run exactly ``ids[:n]``.

        A stored context that diverges from ``ids`` (or runs past it) is forked and its
        cache cropped; the last shared token is then re-run when needed, so that the
        returned state's hidden state belongs to ``ids[n - 1]``."""
        best_len, best_key = 0, None
        for key in self._states:
            n = _common_prefix(key, ids)
            if n > best_len or (n == best_len and best_key is not None and len(key) == n):
                best_len, best_key = n, key
        if best_key is None or best_len == 0:
            return 0, None
        self._states.move_to_end(best_key)
        state = self._states[best_key]
        if best_len == len(best_key) and state.last_hidden is not None:
            return best_len, state
        # Crop to one token short of the shared prefix, then re-run that token for its
        # hidden state (a cropped cache keeps no hidden states).
        keep = best_len - 1
        if keep == 0:
            return 0, None
        cache = self._fork(state.cache)
        for layer in cache.layers:
            layer.keys = layer.keys[..., :keep, :]
            layer.values = layer.values[..., :keep, :]
        new, _ = self._run(_State(cache, None), ids[keep:best_len])
        self._store(ids[:best_len], new)
        return best_len, new

    def _store(self, ids: Sequence[int], state: _State) -> None:
        key = tuple(ids)
        self._states[key] = state
        self._states.move_to_end(key)
        while len(self._states) > self.max_states:
            self._states.popitem(last=False)

    def context_state(self, ids: Sequence[int], *, share: int = 0) -> _State:
        """The state after ``ids``, from the stored context sharing the longest prefix;
        when ``share`` is longer than that prefix (and shorter than ``ids``),
        ``ids[:share]`` is run and stored first so later contexts with the same beginning
        reuse it."""
        if not ids:
            raise ValueError("a context needs at least one token")
        have, state = self._longest_stored(ids)
        if have == len(ids) and state is not None:
            return state
        if have < share < len(ids):
            state, _ = self._run(state, ids[have:share])
            self._store(ids[:share], state)
            have = share
        state, _ = self._run(state, ids[have:])
        self._store(ids, state)
        return state

    def fork_state(self, ids: Sequence[int]) -> Any:
        """A private copy of the cache after ``ids`` (from the longest stored prefix), for
        a caller that goes on from there (generation)."""
        return self._fork(self.context_state(ids).cache)

    def keep(self, ids: Sequence[int], cache: Any) -> None:
        """Store a cache that has run exactly ``ids`` but has no hidden state (the end of
        a generation); a later context re-runs its last token from it."""
        self._store(ids, _State(cache, None))

    def clear(self) -> None:
        """Drop every stored context."""
        self._states.clear()

    # -- scoring ---------------------------------------------------------------------
    def _score_kept(self, state: _State, ctx: Sequence[int], cont: list[int]) -> list[float]:
        """One continuation run on a fork of ``state`` and kept, so a later context that
        goes on past this text (the next turn) starts from here."""
        import torch

        after, hidden = self._run(state, cont)
        self._store([*ctx, *cont], after)
        single = torch.cat([state.last_hidden, hidden[:-1]])
        with torch.inference_mode():
            lp = self._logprobs_at(single, torch.tensor(cont, device=self._device))
        return list(lp.double().cpu().tolist())

    def score(
        self,
        ctx: Sequence[int],
        conts: Sequence[Sequence[int]],
        *,
        share: int = 0,
        extend: Sequence[int] = (),
    ) -> list[list[float]]:
        """Per-token log-probabilities of each continuation after the context ``ctx``.

        A lone continuation, and those whose indices are in ``extend`` (a later context
        goes on from them), are run on their own and their state is kept; the others
        are scored together."""
        import torch

        state = self.context_state(ctx, share=share)
        out: list[list[float]] = [[] for _ in conts]
        todo = [i for i, c in enumerate(conts) if c]
        kept = set(todo) if len(todo) == 1 else set(extend) & set(todo)
        for i in sorted(kept):
            out[i] = self._score_kept(state, ctx, list(conts[i]))
        todo = [i for i in todo if i not in kept]
        if not todo:
            return out
        dev = self._device
        if self._tree_ok():
            got = self._score_tree(state, len(ctx), [list(conts[i]) for i in todo])
            for i, lp_i in zip(todo, got, strict=True):
                out[i] = lp_i
            return out
        for start in range(0, len(todo), self.batch_size):
            chunk = todo[start : start + self.batch_size]
            toks = [list(conts[i]) for i in chunk]
            width = max(len(t) for t in toks)
            rows = [state.last_hidden] * len(toks)
            if width > 1:  # the last token of a continuation predicts nothing we score
                x = torch.tensor([t[:-1] + [0] * (width - len(t)) for t in toks], device=dev)
                cache = self._fork(state.cache)
                cache.batch_repeat_interleave(len(toks))
                with torch.inference_mode():
                    h = self.model.base_model(
                        input_ids=x, cache=cache, use_cache=True
                    ).last_hidden_state
                self.tokens_run += int(x.numel())
                self.calls += 1
                rows = [
                    torch.cat([state.last_hidden, h[b, : len(t) - 1]]) for b, t in enumerate(toks)
                ]
            targets = torch.tensor([v for t in toks for v in t], device=dev)
            with torch.inference_mode():
                lp = self._logprobs_at(torch.cat(rows), targets).double().cpu().tolist()
            pos = 0
            for i, t in zip(chunk, toks, strict=True):
                out[i] = lp[pos : pos + len(t)]
                pos += len(t)
        return out

    # -- tree attention ------------------------------------------------------------
    def _tree_ok(self) -> bool:
        config = self.model.config
        kinds = set(getattr(config, "layer_types", None) or ["full_attention"])
        implementation = getattr(config, "_attn_implementation", None)
        return implementation in ("sdpa", "eager") and kinds <= {
            "full_attention",
            "sliding_attention",
        }

    def _tree_masks(self, ctx_len: int, parents: list[int], depth: list[int]) -> dict[str, Any]:
        """One mask per layer type for the trie nodes that run (row ``r`` has parent row
        ``parents[r]``, -1 for a child of the context): context columns by position, node
        columns by ancestry."""
        import torch

        dev = self._device
        n_run = len(parents)
        allowed = torch.zeros((n_run, ctx_len + n_run), dtype=torch.bool, device=dev)
        allowed[:, :ctx_len] = True
        for r, p in enumerate(parents):
            if p >= 0:
                allowed[r, ctx_len:] = allowed[p, ctx_len:]
            allowed[r, ctx_len + r] = True
        config = self.model.config
        masks = {"full_attention": allowed}
        if "sliding_attention" in set(getattr(config, "layer_types", None) or []):
            q_pos = torch.tensor([ctx_len + d for d in depth], device=dev)
            kv_pos = torch.cat([torch.arange(ctx_len, device=dev), q_pos])
            near = q_pos[:, None] - kv_pos[None, :] < config.sliding_window
            masks["sliding_attention"] = allowed & near
        if config._attn_implementation == "eager":  # additive masks
            low = torch.finfo(self.model.dtype).min
            zero = torch.zeros((), dtype=self.model.dtype, device=dev)
            masks = {k: torch.where(m, zero, low) for k, m in masks.items()}
        return {k: m[None, None] for k, m in masks.items()}

    def _score_tree(self, state: _State, ctx_len: int, conts: list[list[int]]) -> list[list[float]]:
        """Per-token log-probabilities of non-empty continuations after ``state``, as one
        trie in one forward pass (see the module docstring)."""
        import torch

        node_of: dict[tuple[int, int], int] = {}
        token: list[int] = []
        parent: list[int] = []
        paths = []
        for cont in conts:
            at, path = -1, []
            for tok in cont:
                if (at, tok) not in node_of:
                    node_of[(at, tok)] = len(token)
                    token.append(tok)
                    parent.append(at)
                at = node_of[(at, tok)]
                path.append(at)
            paths.append(path)
        depth: list[int] = []
        for p in parent:
            depth.append(0 if p < 0 else depth[p] + 1)
        # Only nodes with a child run (a leaf's hidden state predicts nothing scored).
        # Parents precede their children, so the renumbering keeps that order.
        runs = sorted({p for p in parent if p >= 0})
        row = {node: r for r, node in enumerate(runs)}
        dev = self._device
        first = state.last_hidden[0]
        hidden_for = [first] * len(token)
        if runs:
            masks = self._tree_masks(
                ctx_len, [row.get(parent[n], -1) for n in runs], [depth[n] for n in runs]
            )
            x = torch.tensor([[token[n] for n in runs]], device=dev)
            pos = torch.tensor([[ctx_len + depth[n] for n in runs]], device=dev)
            with torch.inference_mode():
                h = self.model.base_model(
                    input_ids=x,
                    position_ids=pos,
                    attention_mask=masks,
                    cache=self._fork(state.cache),
                    use_cache=True,
                ).last_hidden_state[0]
            self.tokens_run += len(runs)
            self.calls += 1
            hidden_for = [first if p < 0 else h[row[p]] for p in parent]
        with torch.inference_mode():
            lp = self._logprobs_at(torch.stack(hidden_for), torch.tensor(token, device=dev))
        flat = lp.double().cpu().tolist()
        return [[flat[n] for n in path] for path in paths]


def shared_prefixes(contexts: Sequence[Sequence[int]]) -> list[int]:
    """For each context, the longest token prefix it shares with any other one (0 if none);
    contexts are compared in sorted order, where sharing ones are neighbours."""
    order = sorted(range(len(contexts)), key=lambda i: list(contexts[i]))
    share = [0] * len(contexts)
    for a, b in zip(order, order[1:], strict=False):
        n = _common_prefix(contexts[a], contexts[b])
        share[a] = max(share[a], n)
        share[b] = max(share[b], n)
    return share


def extended_texts(contexts: Sequence[Sequence[int]]) -> Callable[[Sequence[int]], bool]:
    """A test: is a token sequence a strict prefix of one of ``contexts``? (A scored
    context + continuation that a later context goes on from.)

    >>> longer = extended_texts([(1, 2, 3), (4, 5)])
    >>> longer((1, 2)), longer((1, 2, 3)), longer((4,)), longer((2,))
    (True, False, True, False)
    """
    ordered = sorted(tuple(c) for c in contexts)

    def test(ids: Sequence[int]) -> bool:
        key = tuple(ids)
        at = bisect.bisect_right(ordered, key)
        return at < len(ordered) and ordered[at][: len(key)] == key

    return test


class OldHFModel(HFModel):
    """HFModel whose ``loglikelihood_tokens`` is the old per-context scheduling."""

    @property
    def scorer(self) -> Any:
        if self._scorer is None:
            self._scorer = OldPrefixScorer(
                self._load()[0], max_states=self.max_states, batch_size=self.batch_size
            )
        return self._scorer

    def loglikelihood_tokens(
        self, requests: Sequence[tuple[Sequence[int], Sequence[int]]]
    ) -> list[list[float]]:
        by_context: dict[tuple[int, ...], list[tuple[int, list[int]]]] = {}
        for i, (ctx_ids, cont_ids) in enumerate(requests):
            cont = list(cont_ids)
            ctx = self.fit(list(ctx_ids), len(cont))
            by_context.setdefault(tuple(ctx), []).append((i, cont))
        contexts = list(by_context)
        share = shared_prefixes(contexts)
        extended = extended_texts(contexts)
        out: list[list[float]] = [[] for _ in requests]
        for j in sorted(range(len(contexts)), key=lambda j: contexts[j]):
            members = by_context[contexts[j]]
            unique = list(dict.fromkeys(tuple(c) for _, c in members))
            extend = [n for n, c in enumerate(unique) if extended(contexts[j] + c)]
            scores = self.scorer.score(
                contexts[j], [list(c) for c in unique], share=share[j], extend=extend
            )
            by_cont = dict(zip(unique, scores, strict=True))
            for i, c in members:
                out[i] = list(by_cont[tuple(c)])
        return out

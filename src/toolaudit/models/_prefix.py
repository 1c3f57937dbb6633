"""Continuation log-probabilities on token ids: the KV-cached scorer and the naive one.

:class:`PrefixScorer` is the one KV-cache implementation in toolaudit. One call's
requests (context + continuation each) are merged into one token trie, so every token
prefix they share runs once, whatever their order, and the output layer runs only at
the positions whose next token is scored. A faults task (five arms, each with its
returns at k = 0..3 and a 51-way action trie after each) is one call.

The trie is walked from its root. A *stem* (the path from a branch to the next branch)
runs as an ordinary causal pass; before it runs, the store of recent contexts (least
recently used first out) is searched for the longest stored token prefix of the stem's
whole path, so a context an earlier call ran (the system prompt and tool schemas shared
by every task of a run) is not run again. A subtree of at most ``tree_limit`` nodes
under a branch runs as one forward pass with tree attention: every trie node is one
position of a single sequence after the branch, at the position it has in its own
sequence, attending to the cached context and to its own ancestors only (a boolean mask
per layer type, the sliding window included). Nothing is copied per continuation and
the context's keys are read once. Models whose attention this mask cannot express
(other than ``sdpa`` / ``eager`` with full and sliding layers) run every stem causally
(more calls, the same tokens).

:func:`naive_logprobs` is the independent check: one full forward pass from the first
token with full output logits, no cache.

The caches are plain ``DynamicCache`` objects that keep every position of every layer,
also for sliding-window layers (their attention mask still applies the window), so a
stored context can be extended by any number of tokens.
"""

from __future__ import annotations

import copy
import logging
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class _State:
    """A context run through the model: its key/value cache (exactly the key's tokens)."""

    cache: Any


def _common_prefix(a: Sequence[int], b: Sequence[int]) -> int:
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return i


class _Trie:
    """Every request's context + continuation as one token trie.

    Node ``n`` holds ``token[n]`` at sequence position ``depth[n]`` under ``parent[n]``
    (-1: the first token). A scored token is a node (its log-probability is read from
    its parent's hidden state); a node *runs* when its hidden state or its keys are
    needed by a scored token, so leaves that are only scored never run.
    """

    def __init__(self) -> None:
        self.token: list[int] = []
        self.parent: list[int] = []
        self.depth: list[int] = []
        self._child: dict[tuple[int, int], int] = {}
        self.scored: set[int] = set()

    def add(self, ids: Sequence[int]) -> list[int]:
        """Insert a token sequence; its node path."""
        at, path = -1, []
        for tok in ids:
            key = (at, int(tok))
            node = self._child.get(key)
            if node is None:
                node = self._child[key] = len(self.token)
                self.token.append(int(tok))
                self.parent.append(at)
                self.depth.append(0 if at < 0 else self.depth[at] + 1)
            path.append(node)
            at = node
        return path

    def plan(self) -> None:
        """The run set, run-children lists and run-subtree sizes (after every ``add``)."""
        runs = [False] * len(self.token)
        for t in self.scored:
            p = self.parent[t]
            while p >= 0 and not runs[p]:
                runs[p] = True
                p = self.parent[p]
        self.runs = runs
        self.kids: dict[int, list[int]] = {}
        self.size = [0] * len(self.token)  # run nodes in the subtree, the node included
        for n in range(len(self.token) - 1, -1, -1):  # children come after parents
            if runs[n]:
                self.size[n] += 1
                p = self.parent[n]
                self.kids.setdefault(p, []).append(n)
                if p >= 0:
                    self.size[p] += self.size[n]
        for k in self.kids.values():
            k.reverse()
        self.scored_kids: dict[int, list[int]] = {}  # node -> the scored tokens after it
        for t in sorted(self.scored):
            self.scored_kids.setdefault(self.parent[t], []).append(t)

    def path_to(self, node: int) -> list[int]:
        """Token ids from the first token to ``node`` inclusive."""
        out = []
        while node >= 0:
            out.append(self.token[node])
            node = self.parent[node]
        return out[::-1]


class PrefixScorer:
    """KV-cache reuse within and across requests (see the module docstring).

    Args:
        model: a loaded Hugging Face causal LM (body at ``model.base_model``).
        max_states: contexts whose caches are kept (least recently used dropped first).
        block: positions per output-layer block (bounds memory on large vocabularies).
        tree_limit: most trie nodes run in one tree-attention pass; a larger subtree is
            split at its branches (its shared stems run as ordinary causal passes).
        min_store: shortest stem (tokens) whose cache is kept for later calls.

    ``tokens_run`` counts token positions the transformer body computed,
    ``positions_scored`` the positions the output layer computed and ``calls`` the
    forward passes of the body (for benchmarks).
    """

    def __init__(
        self,
        model: Any,
        *,
        max_states: int = 8,
        block: int = 256,
        tree_limit: int = 4096,
        min_store: int = 32,
    ) -> None:
        self.model = model
        self.max_states = max(1, int(max_states))
        self.block = max(1, int(block))
        self.tree_limit = max(0, int(tree_limit))
        self.min_store = max(1, int(min_store))
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

    @classmethod
    def _cropped(cls, cache: Any, keep: int) -> Any:
        """A fork of ``cache`` holding its first ``keep`` positions (views, no copy)."""
        new = cls._fork(cache)
        for layer in new.layers:
            layer.keys = layer.keys[..., :keep, :]
            layer.values = layer.values[..., :keep, :]
        return new

    def _run(self, cache: Any, ids: Sequence[int]) -> tuple[Any, Any]:
        """Extend a fork of ``cache`` (or nothing) by ``ids``: the new cache and the ids'
        hidden states."""
        import torch
        from transformers import DynamicCache

        cache = DynamicCache() if cache is None else self._fork(cache)
        x = torch.tensor([list(ids)], device=self._device)
        with torch.inference_mode():
            h = self.model.base_model(input_ids=x, cache=cache, use_cache=True)
        self.tokens_run += len(ids)
        self.calls += 1
        return cache, h.last_hidden_state[0]

    # -- the store -------------------------------------------------------------------
    def _lookup(self, ids: Sequence[int]) -> tuple[int, Any]:
        """The longest stored token prefix of ``ids``: ``(n, cache holding ids[:n])``,
        ``(0, None)`` when none shares a token."""
        best_len, best_key = 0, None
        for key in self._states:
            n = _common_prefix(key, ids)
            if n > best_len:
                best_len, best_key = n, key
        if best_key is None:
            return 0, None
        self._states.move_to_end(best_key)
        cache = self._states[best_key].cache
        if best_len < len(best_key):
            cache = self._cropped(cache, best_len)
        return best_len, cache

    def _store(self, ids: Sequence[int], cache: Any) -> None:
        key = tuple(ids)
        self._states[key] = _State(cache)
        self._states.move_to_end(key)
        while len(self._states) > self.max_states:
            self._states.popitem(last=False)

    def _extend(
        self, ids: Sequence[int], have: int, cache: Any, need_from: int
    ) -> tuple[Any, Any, int]:
        """The cache after ``ids`` and the hidden states of ``ids[start:]``, given
        ``cache`` holding ``ids[:have]``: the longest stored prefix is used instead when
        it is longer, but every position from ``need_from`` on runs (its hidden state is
        read), and so does the last. Returns ``(cache, hidden, start)``; a stem of at
        least ``min_store`` new tokens is stored for later calls."""
        n, stored = self._lookup(ids)
        start = have
        limit = min(len(ids) - 1, need_from)
        if n > have and limit > have:
            start = min(n, limit)
            cache = stored if n == start else self._cropped(stored, start)
        cache, hidden = self._run(cache, ids[start:])
        if len(ids) - have >= self.min_store:
            self._store(ids, cache)
        return cache, hidden, start

    def context_state(self, ids: Sequence[int]) -> Any:
        """The cache after ``ids``, from the stored context sharing the longest prefix
        (stored in turn)."""
        if not ids:
            raise ValueError("a context needs at least one token")
        n, cache = self._lookup(ids)
        if n == len(ids):
            return cache
        cache, _ = self._run(cache, ids[n:])
        self._store(ids, cache)
        return cache

    def fork_state(self, ids: Sequence[int]) -> Any:
        """A private copy of the cache after ``ids`` (from the longest stored prefix), for
        a caller that goes on from there (generation)."""
        return self._fork(self.context_state(ids))

    def keep(self, ids: Sequence[int], cache: Any) -> None:
        """Store a cache that has run exactly ``ids`` (the end of a generation)."""
        self._store(ids, cache)

    def clear(self) -> None:
        """Drop every stored context."""
        self._states.clear()

    # -- scoring ---------------------------------------------------------------------
    def score_requests(
        self, requests: Sequence[tuple[Sequence[int], Sequence[int]]]
    ) -> list[list[float]]:
        """Per-token log-probabilities of each continuation after its context.

        All requests form one token trie, so every token prefix runs once in the call,
        whatever the requests' order; a stem the store already holds (an earlier call's
        context) is not run again. Subtrees of at most ``tree_limit`` nodes run as one
        tree-attention pass; larger ones are split at their branches."""
        trie = _Trie()
        paths = []
        for ctx, cont in requests:
            if not ctx:
                raise ValueError("a context needs at least one token")
            path = trie.add([*ctx, *cont])
            trie.scored.update(path[len(ctx) :])
            paths.append((len(ctx), path))
        trie.plan()
        self._lp: dict[int, float] = {}
        self._walk(trie)
        lp = self._lp
        del self._lp
        return [[lp[n] for n in path[n_ctx:]] for n_ctx, path in paths]

    def _read(self, trie: _Trie, hidden_of: dict[int, Any]) -> None:
        """Log-probabilities of the scored tokens after the nodes in ``hidden_of``."""
        import torch

        rows, nodes = [], []
        for p, h in hidden_of.items():
            for c in trie.scored_kids.get(p, ()):
                rows.append(h)
                nodes.append(c)
        if not nodes:
            return
        targets = torch.tensor([trie.token[c] for c in nodes], device=self._device)
        with torch.inference_mode():
            lp = self._logprobs_at(torch.stack(rows), targets).double().cpu().tolist()
        self._lp.update(zip(nodes, lp, strict=True))

    def _walk(self, trie: _Trie) -> None:
        """Run every node of the trie's run set once and read every scored token. Under a
        node whose subtree holds at most ``tree_limit`` run nodes, the subtree is one tree
        pass; otherwise each child's stem (the path up to the next branch) runs causally,
        with the store, and the walk goes on from the stem's end."""
        tree = self._tree_ok()
        todo: list[tuple[int, Any]] = [(-1, None)]  # (branch node, the cache through it)
        while todo:
            at, cache = todo.pop()
            kids = trie.kids.get(at, [])
            if at >= 0 and tree and trie.size[at] - 1 <= self.tree_limit:
                self._tree(trie, at, cache)
                continue
            for first in kids:
                stem = [first]
                while len(trie.kids.get(stem[-1], ())) == 1:  # up to the next branch
                    stem.append(trie.kids[stem[-1]][0])
                ids = trie.path_to(stem[-1])
                reads = [n for n in stem if n in trie.scored_kids]
                need = trie.depth[reads[0]] if reads else len(ids) - 1
                new, hidden, start = self._extend(ids, trie.depth[first], cache, need)
                self._read(trie, {n: hidden[trie.depth[n] - start] for n in reads})
                if trie.kids.get(stem[-1]):
                    todo.append((stem[-1], new))

    # -- tree attention ------------------------------------------------------------
    def _tree_ok(self) -> bool:
        config = self.model.config
        kinds = set(getattr(config, "layer_types", None) or ["full_attention"])
        implementation = getattr(config, "_attn_implementation", None)
        return (
            self.tree_limit > 0
            and implementation in ("sdpa", "eager")
            and kinds <= {"full_attention", "sliding_attention"}
        )

    def _tree_masks(self, ctx_len: int, parents: list[int], depth: list[int]) -> Any:
        """One mask per layer type for the trie nodes that run (row ``r`` has parent row
        ``parents[r]``, -1 for a child of the context): context columns by position, node
        columns by ancestry. A model whose config names no layer types (Llama) gets the
        one mask itself: its forward pass takes no per-layer-type mapping."""
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
            q_pos = torch.tensor(depth, device=dev)
            kv_pos = torch.cat([torch.arange(ctx_len, device=dev), q_pos])
            near = q_pos[:, None] - kv_pos[None, :] < config.sliding_window
            masks["sliding_attention"] = allowed & near
        if config._attn_implementation == "eager":  # additive masks
            low = torch.finfo(self.model.dtype).min
            zero = torch.zeros((), dtype=self.model.dtype, device=dev)
            masks = {k: torch.where(m, zero, low) for k, m in masks.items()}
        if not getattr(config, "layer_types", None):  # one mask for every layer (Llama):
            return masks["full_attention"][None, None]  # its forward takes no mapping
        return {k: m[None, None] for k, m in masks.items()}

    def _tree(self, trie: _Trie, at: int, cache: Any) -> None:
        """The run nodes under ``at`` in one forward pass on a fork of ``cache`` (which
        holds the path to ``at``), each at its own position, attending to the context
        and its own ancestors (see the module docstring); then every scored token
        under them (the stem that ran ``at`` read the tokens after it)."""
        import torch

        runs, stack = [], list(reversed(trie.kids[at]))
        while stack:  # depth first, parents before children
            n = stack.pop()
            runs.append(n)
            stack.extend(reversed(trie.kids.get(n, [])))
        row = {n: r for r, n in enumerate(runs)}
        ctx_len = trie.depth[at] + 1
        masks = self._tree_masks(
            ctx_len,
            [row.get(trie.parent[n], -1) for n in runs],
            [trie.depth[n] for n in runs],
        )
        dev = self._device
        x = torch.tensor([[trie.token[n] for n in runs]], device=dev)
        pos = torch.tensor([[trie.depth[n] for n in runs]], device=dev)
        with torch.inference_mode():
            h = self.model.base_model(
                input_ids=x,
                position_ids=pos,
                attention_mask=masks,
                cache=self._fork(cache),
                use_cache=True,
            ).last_hidden_state[0]
        self.tokens_run += len(runs)
        self.calls += 1
        self._read(trie, {n: h[row[n]] for n in runs if n in trie.scored_kids})


def naive_logprobs(model: Any, ctx: Sequence[int], cont: Sequence[int]) -> list[float]:
    """The independent path: one full forward pass of ``ctx + cont`` with full logits."""
    import torch

    if not cont:
        return []
    ids = list(ctx) + list(cont)
    dev = next(model.parameters()).device
    with torch.inference_mode():
        logits = model(input_ids=torch.tensor([ids], device=dev)).logits[0].float()
        lp = torch.log_softmax(logits[len(ctx) - 1 : len(ids) - 1], dim=-1)
        tgt = torch.tensor(list(cont), device=dev)
        return lp.gather(-1, tgt[:, None])[:, 0].double().cpu().tolist()

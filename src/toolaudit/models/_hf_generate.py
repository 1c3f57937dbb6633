"""Generation for the ``transformers`` backend: raw completion and chat replies.

Completion is greedy over left-padded batches (a batch gives the same text as one
prompt at a time). A chat reply is one sequence: greedy at temperature 0, otherwise
sampled under a private RNG seeded with ``seed`` (the global RNG is left untouched), so
the same seed gives the same reply. Decoding keeps special tokens long enough to find
tool-call markup, then drops end-of-turn markers.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any, Protocol

from toolaudit.models._base import Generation, cut_at_stop
from toolaudit.models._toolcalls import parse_tool_calls


class LoadedModel(Protocol):
    """What decoding needs of a transformers backend (:class:`~toolaudit.models.HFModel`
    gives it): the loaded model and tokenizer, prompt encoding and fitting to the window,
    the batch size, the prefix store and the identity. A protocol, so this module does
    not import the backend that imports it."""

    batch_size: int

    @property
    def identity(self) -> str: ...

    @property
    def scorer(self) -> Any: ...

    def _load(self) -> tuple[Any, Any]: ...

    def encode_context(self, text: str) -> list[int]: ...

    def fit(self, ids: list[int], extra: int) -> list[int]: ...


logger = logging.getLogger(__name__)

# Tokens that end an assistant turn in the chat formats we know (looked up, not assumed).
_TURN_ENDS = ("<|im_end|>", "<end_of_turn>", "<|eot_id|>", "<|endoftext|>")


def end_ids(tok: Any) -> list[int]:
    """Token ids that end generation: ``<eos>`` and every known end-of-turn token."""
    ids: list[int] = []
    if tok.eos_token_id is not None:
        ids.append(int(tok.eos_token_id))
    for t in _TURN_ENDS:
        i = tok.convert_tokens_to_ids(t)
        if isinstance(i, int) and i != tok.unk_token_id and i not in ids:
            ids.append(i)
    return ids


def _pad_id(tok: Any, ends: list[int]) -> int:
    if tok.pad_token_id is not None:
        return int(tok.pad_token_id)
    return ends[0] if ends else 0


def complete(
    lm: LoadedModel, prompts: Sequence[str], *, max_tokens: int, stop: Sequence[str]
) -> list[str]:
    """Greedy completions of raw prompts, cut at the first stop string."""
    import torch

    model, tok = lm._load()
    encoded = [lm.fit(lm.encode_context(p), max_tokens) for p in prompts]
    ends = end_ids(tok)
    pad = _pad_id(tok, ends)
    dev = next(model.parameters()).device
    out: list[str] = [""] * len(prompts)
    order = sorted(range(len(encoded)), key=lambda i: -len(encoded[i]))
    for start in range(0, len(order), max(1, lm.batch_size)):
        chunk = order[start : start + lm.batch_size]
        width = max(len(encoded[i]) for i in chunk)
        ids = torch.full((len(chunk), width), pad, dtype=torch.long)
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
                eos_token_id=ends or None,
                pad_token_id=pad,
                **extra,
            )
        for r, i in enumerate(chunk):
            text = tok.decode(gen[r, width:], skip_special_tokens=True)
            out[i] = cut_at_stop(text, stop)
    return out


def generate(
    lm: LoadedModel,
    prompt: str,
    *,
    max_tokens: int,
    temperature: float,
    seed: int | None,
    stop: Sequence[str],
) -> Generation:
    """One reply to a rendered chat prompt, with tool calls parsed."""
    import torch

    model, tok = lm._load()
    ids = lm.fit(lm.encode_context(prompt), max_tokens)
    ends = end_ids(tok)
    dev = next(model.parameters()).device
    sample = temperature > 0
    extra: dict[str, Any] = {}
    if any(stop):
        extra = {"stop_strings": [x for x in stop if x], "tokenizer": tok}
    if sample:
        extra.update(temperature=float(temperature), top_p=1.0, top_k=0)
    else:
        extra.update(temperature=None, top_p=None, top_k=None)
    devices = [dev] if dev.type == "cuda" else []
    # The prompt's longest stored prefix (the previous turn of the same conversation,
    # or a shared system prompt) is not run again: generation goes on from its cache.
    cache = lm.scorer.fork_state(ids[:-1]) if len(ids) > 1 else None
    with torch.random.fork_rng(devices=devices), torch.inference_mode():
        torch.manual_seed(0 if seed is None else int(seed))
        gen = model.generate(
            input_ids=torch.tensor([ids], device=dev),
            attention_mask=torch.ones((1, len(ids)), dtype=torch.long, device=dev),
            cache=cache,
            max_new_tokens=max_tokens,
            do_sample=sample,
            eos_token_id=ends or None,
            pad_token_id=_pad_id(tok, ends),
            **extra,
        )
    seq = [int(t) for t in gen[0]]
    if cache is not None and cache.get_seq_length() == len(seq) - 1:
        lm.scorer.keep(seq[:-1], cache)
    return reply(lm.identity, tok, seq[len(ids) :], ends, max_tokens=max_tokens, stop=stop)


def reply(
    identity: str,
    tok: Any,
    new: list[int],
    ends: Sequence[int],
    *,
    max_tokens: int,
    stop: Sequence[str],
) -> Generation:
    """The :class:`Generation` of generated token ids (any local engine): decoded with
    special tokens, end-of-turn markers dropped, cut at a stop string, tool calls parsed."""
    hit_end = bool(new) and new[-1] in ends
    if hit_end:
        new = new[:-1]
    raw = tok.decode(new, skip_special_tokens=False)
    for t in _TURN_ENDS:
        raw = raw.replace(t, "")
    cut = cut_at_stop(raw, stop)
    stopped = cut != raw
    parsed = parse_tool_calls(cut)
    if parsed.tool_calls:
        reason = "tool_calls"
    elif hit_end or stopped or len(new) < max_tokens:
        reason = "stop"
    else:
        reason = "length"
    for err in parsed.parse_errors:
        logger.info("%s: unparsed tool call: %s", identity, err)
    return Generation(
        text=parsed.text,
        tool_calls=parsed.tool_calls,
        raw=cut,
        parse_errors=parsed.parse_errors,
        finish_reason=reason,
    )

"""Reading prompt log-probabilities out of an OpenAI-compatible completions response.

Two layouts are read here:

* ``echo`` (``echo=True, logprobs=1, max_tokens=1``): one entry per prompt token, each
  with its character offset, then the generated token. :func:`read_echo` picks the
  continuation's tokens (those ending after the context) and checks the alignment.
* vLLM's ``prompt_logprobs`` extension (:func:`prompt_logprobs_of`).

**Alignment check.** A correct echo lists every prompt token and then the token it
generated. llama-cpp-python (0.3.x) pairs the i-th prompt token with the logits
*computed at* position i (the distribution of token i+1) whenever the model adds no
``<bos>`` (Qwen; Gemma adds one and is read correctly); its scores array is then one row
short, so the generated token is missing from the listed entries. Measured on Qwen2.5
0.5B: at " asked" in "The customer asked for a refund" the echo reports
``log P(next token = " asked")`` = -13.26 instead of ``log P(" asked")`` = -4.73. So an
echo is trusted only when it lists an entry at or after the end of the prompt; otherwise
(:attr:`EchoScores.aligned` false) the caller scores each continuation token by a forced
completion (:func:`forced_request`), which reads the model's distribution where it is
computed, after the text before the token. (A forced completion's reported
log-probability comes from llama-cpp-python's unbiased logits: its logit bias acts in
the sampler, not on the stored scores.)
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from toolaudit.errors import ModelError

logger = logging.getLogger(__name__)

# Added to the logit of the token being forced; the log-probability the server reports
# is read from the unbiased logits (llama-cpp-python applies logit_bias in its sampler).
FORCE_BIAS = 100.0


@dataclass(frozen=True, slots=True)
class EchoScores:
    """The continuation's tokens as the server tokenized ``context + continuation``.

    Attributes:
        tokens: token strings, in order.
        offsets: each token's character offset in the prompt.
        values: each token's reported log-probability (``None`` for the prompt's first).
        aligned: whether the echo passed the alignment check (values are usable).
        decisive: whether a failed check proves the layout misaligned: the server says
            it generated a token (``usage.completion_tokens``) that it did not list. A
            server that stopped at once (end of sequence) lists none either way.
    """

    tokens: tuple[str, ...]
    offsets: tuple[int, ...]
    values: tuple[float | None, ...]
    aligned: bool
    decisive: bool


def served_logprob(value: Any, *, source: str, where: str) -> float:
    """A log-probability a server sent: a JSON number (an int or a float, not a string
    or a boolean); anything else is a ModelError in one line naming ``source`` and
    ``where``, since ``float("-0.5")`` would silently accept a string.

    >>> served_logprob("-0.5", source="srv", where="token 0")
    Traceback (most recent call last):
    ...
    toolaudit.errors.ModelError: srv: the log-probability at token 0 is a str ('-0.5'), not a number
    """
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ModelError(
            f"{source}: the log-probability at {where} is a {type(value).__name__} "
            f"({str(value)[:40]!r}), not a number"
        )
    return float(value)


def _served_ints(values: Any, *, source: str, what: str) -> list[int]:
    """Integers a server sent (token offsets, token ids), or a ModelError naming them."""
    out = list(values)
    for i, v in enumerate(out):
        if isinstance(v, bool) or not isinstance(v, int):
            raise ModelError(
                f"{source}: {what} {i} is a {type(v).__name__} ({str(v)[:40]!r}), not an integer"
            )
    return out


def read_echo(resp: Any, *, context: str, prompt: str, source: str) -> EchoScores:
    """The continuation's tokens, offsets and log-probabilities from an echoed completion.

    A token that straddles the context/continuation boundary counts as a continuation
    token (logged at debug level); the generated token after the prompt is ignored.
    """
    lp = resp.choices[0].logprobs if resp.choices else None
    if lp is None or not lp.text_offset or lp.token_logprobs is None:
        raise ModelError(
            f"{source}: the server returned no prompt log-probabilities for echo=True; "
            "scoring needs a server that supports echo with logprobs (vLLM, llama.cpp)"
        )
    offsets = _served_ints(lp.text_offset, source=source, what="text_offset")
    if not isinstance(lp.tokens, list) or not all(isinstance(t, str) for t in lp.tokens):
        raise ModelError(f"{source}: the echoed tokens are not a list of strings")
    ends = offsets[1:] + [offsets[-1] + len(lp.tokens[-1])]
    cut, end = len(context), len(prompt)
    picked: list[int] = []
    for i, (start, stop) in enumerate(zip(offsets, ends, strict=False)):
        if stop <= cut or start >= end:
            continue
        if start < cut:
            logger.debug(
                "%s: token %r straddles the context/continuation boundary", source, lp.tokens[i]
            )
        picked.append(i)
    aligned = any(o >= end for o in offsets)
    generated = getattr(getattr(resp, "usage", None), "completion_tokens", None)
    return EchoScores(
        tokens=tuple(str(lp.tokens[i]) for i in picked),
        offsets=tuple(offsets[i] for i in picked),
        values=tuple(lp.token_logprobs[i] for i in picked),
        aligned=aligned,
        decisive=aligned or (isinstance(generated, int) and generated > 0),
    )


def echo_values(echo: EchoScores, *, source: str) -> list[float]:
    """The log-probabilities of an echo that passes the alignment check.

    Raises:
        ModelError: the echo is misaligned (see the module docstring; the backend then
            scores by forced completions), or the continuation starts the prompt.
    """
    if not echo.aligned:
        raise ModelError(
            f"{source}: the echoed log-probabilities do not list the generated token, so "
            "they are not aligned with the prompt tokens; score by forced completions"
        )
    if any(v is None for v in echo.values):
        raise ModelError(
            f"{source}: no log-probability for the first prompt token; give a non-empty context"
        )
    return [
        served_logprob(v, source=source, where=f"continuation token {i}")
        for i, v in enumerate(echo.values)
        if v is not None
    ]


def continuation_logprobs(resp: Any, *, context: str, prompt: str, source: str) -> list[float]:
    """:func:`echo_values` of :func:`read_echo`: the continuation's log-probabilities."""
    return echo_values(
        read_echo(resp, context=context, prompt=prompt, source=source), source=source
    )


def forced_request(prompt: str, token: str, *, source: str) -> dict[str, Any]:
    """Completions arguments that score ``token`` right after the text ``prompt``.

    One generated token, greedy, with ``token`` forced by a logit bias given as text
    (llama-cpp-python's ``logit_bias_type="tokens"``); the response's first
    ``token_logprobs`` entry is then the token's log-probability after the text.
    """
    if not prompt:
        raise ModelError(
            f"{source}: no log-probability for the first prompt token; give a non-empty context"
        )
    return {
        "prompt": prompt,
        "max_tokens": 1,
        "temperature": 0,
        "logprobs": 1,
        "logit_bias": {token: FORCE_BIAS},
        "extra_body": {"logit_bias_type": "tokens"},
    }


def forced_logprob(resp: Any, *, token: str | None, source: str) -> float:
    """The forced token's log-probability from a :func:`forced_request` response.

    ``token`` None skips the check that the generated token is the forced one (a token-id
    request: the server's token text may be a partial UTF-8 piece).

    Raises:
        ModelError: the server generated another token (it ignored the bias, or the
            token's text does not map back to that token) or returned no logprobs.
    """
    lp = resp.choices[0].logprobs if resp is not None and resp.choices else None
    if lp is None or not lp.tokens or not lp.token_logprobs or lp.token_logprobs[0] is None:
        raise ModelError(
            f"{source}: a forced completion returned no log-probability; the server must "
            "return logprobs for generated tokens"
        )
    if token is not None and lp.tokens[0] != token:
        raise ModelError(
            f"{source}: could not force the token {token!r} (the server generated "
            f"{lp.tokens[0]!r}); its echo is misaligned and it does not accept "
            "logit_bias_type='tokens': use a server with correct echo logprobs (vLLM)"
        )
    return served_logprob(lp.token_logprobs[0], source=source, where="the forced token")


def _prompt_logprobs(resp: Any, *, source: str) -> list[Any]:
    """The ``prompt_logprobs`` list of a vLLM completions response (one line if absent)."""
    choice = resp.choices[0] if resp.choices else None
    data = getattr(choice, "prompt_logprobs", None)
    if data is None and choice is not None:
        data = (getattr(choice, "model_extra", None) or {}).get("prompt_logprobs")
    if not data:
        raise ModelError(
            f"{source}: the server returned no prompt_logprobs; it is a vLLM extension: "
            "use scoring='echo' for other servers"
        )
    return list(data)


def prompt_logprobs_of(resp: Any, *, context: str, prompt: str, source: str) -> list[float]:
    """The continuation's log-probabilities from vLLM's ``prompt_logprobs`` field.

    vLLM returns, per prompt token, ``{token_id: {logprob, rank, decoded_token}}`` (the
    first entry is ``None``); character offsets come from the decoded tokens, which must
    rebuild the prompt exactly (else use ``scoring="echo"``).
    """
    data = _prompt_logprobs(resp, source=source)
    if data[0] is not None or any(e is None for e in data[1:]):
        raise ModelError(f"{source}: unexpected prompt_logprobs layout; use scoring='echo'")
    tokens = []
    for i, entry in enumerate(data[1:], start=1):
        info = next(iter(entry.values()))
        info = info if isinstance(info, dict) else info.model_dump()
        value = served_logprob(info.get("logprob"), source=source, where=f"prompt token {i}")
        tokens.append((str(info.get("decoded_token")), value))
    joined = "".join(t for t, _ in tokens)
    pos = len(prompt) - len(joined)  # the first token (no log-probability) fills the rest
    if pos < 1 or prompt[pos:] != joined:
        raise ModelError(
            f"{source}: prompt_logprobs tokens do not rebuild the prompt; use scoring='echo'"
        )
    picked = []
    for token, value in tokens:
        start, pos = pos, pos + len(token)
        if pos > len(context) and start < len(prompt):
            picked.append(value)
    if len(context) < len(prompt) - len(joined):
        raise ModelError(
            f"{source}: no log-probability for the first prompt token; give a non-empty context"
        )
    return picked


# -- token-id prompts (a local tokenizer: see toolaudit.models._template) ----------------
def echo_by_position(resp: Any, n_prompt: int, n_ctx: int, *, source: str) -> list[float] | None:
    """Log-probabilities of prompt tokens ``n_ctx..n_prompt-1`` from an echoed completion
    of a token-id prompt, read by position; ``None`` when the echo is misaligned (no
    entry for the generated token: see the module docstring)."""
    lp = resp.choices[0].logprobs if resp.choices else None
    values = None if lp is None else lp.token_logprobs
    if values is None:
        raise ModelError(
            f"{source}: the server returned no prompt log-probabilities for echo=True; "
            "scoring needs a server that supports echo with logprobs (vLLM, llama.cpp)"
        )
    if len(values) < n_prompt + 1:
        generated = getattr(getattr(resp, "usage", None), "completion_tokens", None)
        if len(values) == n_prompt and isinstance(generated, int) and generated > 0:
            return None
        raise ModelError(
            f"{source}: the echo lists {len(values)} log-probabilities for a "
            f"{n_prompt}-token prompt; expected one per prompt token and the generated one"
        )
    picked = values[n_ctx:n_prompt]
    if any(v is None for v in picked):
        raise ModelError(
            f"{source}: no log-probability for the first prompt token; give a non-empty context"
        )
    return [
        served_logprob(v, source=source, where=f"prompt token {n_ctx + i}")
        for i, v in enumerate(picked)
    ]


def forced_id_request(prompt: list[int], token: int) -> dict[str, Any]:
    """Completions arguments that score the token id ``token`` right after the token ids
    ``prompt``: one greedy token, forced by a logit bias keyed by its id (the OpenAI
    layout); the response's first ``token_logprobs`` entry is its log-probability."""
    return {
        "prompt": prompt,
        "max_tokens": 1,
        "temperature": 0,
        "logprobs": 1,
        "logit_bias": {str(int(token)): FORCE_BIAS},
    }


def prompt_logprobs_by_id(resp: Any, ids: list[int], n_ctx: int, *, source: str) -> list[float]:
    """Log-probabilities of ``ids[n_ctx:]`` from vLLM's ``prompt_logprobs`` for a
    token-id prompt: entry ``i`` maps token ids (as text) to ``{logprob, rank,
    decoded_token}`` and always holds the prompt's own token ``ids[i]``."""
    data = _prompt_logprobs(resp, source=source)
    if len(data) != len(ids):
        raise ModelError(
            f"{source}: prompt_logprobs has {len(data)} entries for a {len(ids)}-token prompt"
        )
    out = []
    for i in range(n_ctx, len(ids)):
        entry = data[i]
        info = None if entry is None else entry.get(str(ids[i]), entry.get(ids[i]))
        if info is None:
            raise ModelError(
                f"{source}: prompt_logprobs entry {i} lacks the prompt's token {ids[i]}"
            )
        info = info if isinstance(info, dict) else info.model_dump()
        out.append(served_logprob(info.get("logprob"), source=source, where=f"prompt token {i}"))
    return out

"""llama.cpp in process (``llama:qwen``, ``llama:gemma``, ``llama:qwen1.5b``,
``llama:smollm2``, ``llama:PATH.gguf``).

The embedded models ship as GGUF files; this backend runs them with llama.cpp's own
integer kernels (through ``llama-cpp-python``) instead of de-quantized float32 weights
in transformers. On the 2-core CPU it decodes 1.8-5.3x faster with two threads over four
runs (the probe agent's job; docs/models.md) and scores long contexts 4.6-5.9x slower
than the float32 token trie; ``benchmarks/engine_speed.py`` measures both engines side
by side and the log-probabilities' distance from transformers float32 (0.015 nats a
token on Qwen).

Text goes through the same Hugging Face tokenizer and chat template as the ``embedded:``
backend (for Qwen 0.5B and Gemma, the converted folder of the same GGUF; for the other
embedded models and any other GGUF, the file's own metadata, so the 1.5B runs here
without its 6 GB float32 folder), so
a chat renders to the same text and the same token ids under both engines. Scoring
decodes each context + continuation with logits only at the scored positions, in
sorted order so a context shared with the previous request (and the KV cache llama.cpp
holds from the last call or generation) is not run again. Generation goes on from the
longest cached prefix of the prompt (llama-cpp-python's prefix match): the turns of one
episode, and runs that share a system prompt, read their shared prefix once.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from toolaudit.errors import MissingDependencyError, ModelError
from toolaudit.models._assemble import file_sha256
from toolaudit.models._base import ChatTurn, Generation, ToolSpec, unsupported
from toolaudit.models._hf import HFModel

logger = logging.getLogger(__name__)


def _gguf_digest(path: Path) -> str:
    """First 16 hex digits of a SHA-256 over the file's size and first and last 4 MiB
    (the embedded Qwen's identity, kept as its committed results spell it: the file itself
    is checked in full against its known SHA-256 when it is located)."""
    h = hashlib.sha256(str(path.stat().st_size).encode())
    with path.open("rb") as fh:
        h.update(fh.read(1 << 22))
        fh.seek(max(0, path.stat().st_size - (1 << 22)))
        h.update(fh.read(1 << 22))
    return h.hexdigest()[:16]


@contextlib.contextmanager
def _quiet_stderr() -> Iterator[None]:
    """File descriptor 2 to /dev/null for the duration (C libraries write there)."""
    sys.stderr.flush()
    saved = os.dup(2)
    try:
        with open(os.devnull, "w") as null:
            os.dup2(null.fileno(), 2)
            yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


class LlamaModel(HFModel):
    """A GGUF model run by llama.cpp behind the :class:`LanguageModel` interface.

    Args:
        path: an embedded model's name (``qwen``, ``gemma``, ``qwen1.5b``, ``smollm2``)
            or a ``.gguf`` file.
        threads: CPU threads for llama.cpp (default 1: run one process per core).
        max_length: the window in tokens (llama.cpp's ``n_ctx``); default the model's
            training context, at most 32,768.
        truncate: ``error`` (default), ``left`` or ``middle``, as for ``embedded:``.
        n_batch: tokens per llama.cpp decode call.

    Example:
        >>> lm = LlamaModel("qwen")  # doctest: +SKIP
        >>> lm.generate([{"role": "user", "content": "Hi"}], max_tokens=8).text  # doctest: +SKIP
    """

    def __init__(
        self,
        path: str | None = None,
        *,
        threads: int = 1,
        max_length: int | None = None,
        truncate: str = "error",
        n_batch: int = 512,
    ) -> None:
        super().__init__(path, max_length=max_length, truncate=truncate)
        if threads < 1:
            from toolaudit.errors import ConfigError

            raise ConfigError.invalid("threads", "an integer >= 1", threads)
        self.threads = int(threads)
        self.n_batch = max(1, int(n_batch))
        self._llm: Any = None

    # -- naming --------------------------------------------------------------------
    @property
    def _embedded_name(self) -> str | None:
        from toolaudit.models._embedded import EMBEDDED

        return self.path if self.path in EMBEDDED else None

    @property
    def spec(self) -> str:
        """``llama:qwen``, ``llama:gemma`` or ``llama:PATH``."""
        return f"llama:{self.path}"

    def _gguf(self) -> Path:
        name = self._embedded_name
        if name is not None:
            from toolaudit.models._embedded import embedded_gguf_path

            return embedded_gguf_path(name)
        p = Path(str(self.path)).expanduser()
        if not p.is_file():
            from toolaudit.models._embedded import EMBEDDED

            raise ModelError(
                f"llama:{self.path}: no such GGUF file (give {', '.join(EMBEDDED)} or a .gguf)"
            )
        return p

    def _folder(self) -> str:
        name = self._embedded_name
        if name is not None:
            from toolaudit.models._embedded import embedded_model_dir

            return str(embedded_model_dir(name))
        return str(self._gguf().parent)

    @property
    def identity(self) -> str:
        """``llama:STEM-DIGEST[gguf,window=N,truncate=...]``: the GGUF's own weights, so
        never equal to the float32 ``embedded:`` identity of the same model. ``DIGEST`` is
        the SHA-256 of the whole file (for ``llama:qwen``, whose file is verified in full
        against the parts' digest, a digest of its ends, as its results record it)."""
        if self._identity is None:
            gguf = self._gguf()
            self._window = self.max_length or min(self._train_context(gguf), 32768)
            name = self._embedded_name
            if name == "qwen":
                digest = _gguf_digest(gguf)
            elif name is not None and name != "gemma":  # verified in full when located
                from toolaudit.models._embedded import embedded_entry

                digest = str(embedded_entry(name).known_digest)[:16]
            else:  # every byte of the weights: a file damaged in place is another identity
                digest = file_sha256(gguf)[:16]
            self._identity = (
                f"llama:{gguf.stem}-{digest}[gguf,window={self._window},truncate={self.truncate}]"
            )
        return self._identity

    @staticmethod
    def _train_context(gguf: Path) -> int:
        from gguf import GGUFReader

        fields = GGUFReader(str(gguf)).fields
        for key, field in fields.items():
            if key.endswith(".context_length"):
                return int(field.parts[field.data[0]][0])
        return 4096

    # -- loading -------------------------------------------------------------------
    def _load(self) -> tuple[Any, Any]:
        if self._llm is None:
            try:
                from llama_cpp import Llama
                from transformers import AutoTokenizer
            except ImportError:
                raise MissingDependencyError("llama-cpp-python", "llama") from None
            gguf = self._gguf()
            _ = self.identity
            if self._embedded_name in ("qwen", "gemma"):  # as their committed results ran
                tok = AutoTokenizer.from_pretrained(self._folder())
            else:
                from toolaudit.models._embedded import gguf_chat_template

                tok = AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
                if not getattr(tok, "chat_template", None):
                    tok.chat_template = gguf_chat_template(gguf)
            with _quiet_stderr():  # llama.cpp logs its cache layout from C
                self._llm = Llama(
                    model_path=str(gguf),
                    n_ctx=self.window,
                    n_batch=self.n_batch,
                    n_ubatch=self.n_batch,
                    n_threads=self.threads,
                    n_threads_batch=self.threads,
                    logits_all=False,
                    swa_full=True,  # sliding-window layers keep every position
                    verbose=False,
                )
            if self._llm.n_vocab() < len(tok):
                raise ModelError(f"{self.spec}: the tokenizer is larger than the GGUF's vocabulary")
            self._tok = tok
            self._prepare_tokenizer()
            logger.info("loaded %s", self.identity)
        return self._llm, self._tok

    @property
    def model(self) -> Any:
        """The ``llama_cpp.Llama`` instance (loads on first access)."""
        return self._load()[0]

    @property
    def scorer(self) -> Any:
        raise unsupported(self.identity, "give a transformers scorer", "it runs llama.cpp")

    def clear_cache(self) -> None:
        """Forget the cached context (the next call runs from the first token)."""
        if self._llm is not None:
            self._llm.reset()

    # -- scoring -------------------------------------------------------------------
    def loglikelihood_tokens(
        self, requests: Sequence[tuple[Sequence[int], Sequence[int]]]
    ) -> list[list[float]]:
        """Per-token log-probabilities; requests run in token order (shared prefixes
        once), with logits only where a continuation token is scored."""
        llm, _ = self._load()
        pairs = []
        for ctx_ids, cont_ids in requests:
            cont = [int(t) for t in cont_ids]
            pairs.append((self.fit([int(t) for t in ctx_ids], len(cont)), cont))
        out: list[list[float]] = [[] for _ in pairs]
        done: dict[tuple[int, ...], list[float]] = {}
        for i in sorted(range(len(pairs)), key=lambda i: pairs[i][0] + pairs[i][1]):
            ctx, cont = pairs[i]
            key = (len(ctx), *ctx, *cont)
            if not cont:
                continue
            if key not in done:
                done[key] = self._score_one(llm, ctx, cont)
            out[i] = list(done[key])
        return out

    def _score_one(self, llm: Any, ctx: list[int], cont: list[int]) -> list[float]:
        import numpy as np

        seq = ctx + cont
        cached = llm.input_ids[: llm.n_tokens].tolist()
        same = 0
        for a, b in zip(cached, seq, strict=False):
            if a != b:
                break
            same += 1
        start = min(same, len(ctx) - 1)  # the last context token runs: its logits score
        llm._ctx.kv_cache_seq_rm(-1, start, -1)
        llm.n_tokens = start
        first = len(ctx) - 1  # positions from here on give a scored token's logits
        feed = seq[start:-1]
        rows: list[Any] = []
        batch = llm._batch
        n_vocab = llm.n_vocab()
        for off in range(0, len(feed), self.n_batch):
            chunk = feed[off : off + self.n_batch]
            base = start + off
            batch.reset()
            b = batch.batch
            b.n_tokens = len(chunk)
            want = []
            for j, tok in enumerate(chunk):
                b.token[j] = tok
                b.pos[j] = base + j
                b.seq_id[j][0] = 0
                b.n_seq_id[j] = 1
                b.logits[j] = base + j >= first
                if base + j >= first:
                    want.append(j)
            llm._ctx.decode(batch)
            llm.input_ids[base : base + len(chunk)] = chunk
            llm.n_tokens = base + len(chunk)
            for j in want:
                ptr = llm._ctx.get_logits_ith(j)
                rows.append(np.ctypeslib.as_array(ptr, shape=(n_vocab,)).astype(np.float64))
        llm._requires_eval = True
        logits = np.stack(rows)
        top = logits.max(axis=1, keepdims=True)
        lse = top[:, 0] + np.log(np.exp(logits - top).sum(axis=1))
        return [float(logits[n, t] - lse[n]) for n, t in enumerate(cont)]

    # -- generation ----------------------------------------------------------------
    def complete(
        self, prompts: Sequence[str], *, max_tokens: int = 32, stop: Sequence[str] = ()
    ) -> list[str]:
        """Greedy raw-text completions, cut at the first stop string."""
        from toolaudit.models._base import cut_at_stop

        out = []
        for p in prompts:
            llm, tok = self._load()
            ids = self.fit(self.encode_context(p), max_tokens)
            new = self._sample(ids, max_tokens=max_tokens, temperature=0.0, seed=None)
            ends = set(self._end_ids())
            text = tok.decode([t for t in new if t not in ends], skip_special_tokens=True)
            out.append(cut_at_stop(text, stop))
        return out

    def _end_ids(self) -> list[int]:
        from toolaudit.models._hf_generate import end_ids

        return end_ids(self._load()[1])

    def _sample(
        self, ids: list[int], *, max_tokens: int, temperature: float, seed: int | None
    ) -> list[int]:
        llm, _ = self._load()
        ends = set(self._end_ids())
        llm.set_seed(0 if seed is None else int(seed))
        new: list[int] = []
        if max_tokens <= 0:
            return new
        for tok in llm.generate(
            ids,
            temp=float(temperature),
            top_k=0,
            top_p=1.0,
            min_p=0.0,
            typical_p=1.0,
            repeat_penalty=1.0,
        ):
            new.append(int(tok))
            if tok in ends or len(new) >= max_tokens:
                break
        return new

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
        """The model's reply to a chat (its own template), tool calls parsed; greedy at
        temperature 0, otherwise sampled with ``seed`` (same seed, same reply)."""
        from toolaudit.models._hf_generate import reply

        _, tok = self._load()
        prompt = self.render(messages, tools)
        ids = self.fit(self.encode_context(prompt), max_tokens)
        new = self._sample(ids, max_tokens=max_tokens, temperature=temperature, seed=seed)
        return reply(self.identity, tok, new, self._end_ids(), max_tokens=max_tokens, stop=stop)


def load_llama(target: str, **options: Any) -> LlamaModel:
    """Registry factory for ``llama:qwen``, ``llama:gemma`` and ``llama:PATH.gguf``."""
    if not target:
        raise ModelError("llama: spec needs qwen, gemma or a .gguf path, e.g. llama:qwen")
    try:
        import llama_cpp  # noqa: F401
    except ImportError:
        raise MissingDependencyError("llama-cpp-python", "llama") from None
    return LlamaModel(target, **options)

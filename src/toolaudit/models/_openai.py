"""OpenAI-compatible server backend (``openai:MODEL@URL``): vLLM, llama.cpp's server,
SGLang, Ollama, hosted APIs.

Log-likelihoods come from the completions endpoint with ``echo=True, logprobs=1,
max_tokens=1``: the server scores the whole prompt ``context + continuation`` and returns
each prompt token's log-probability with its character offset; the continuation's
tokens are those ending after ``len(context)`` and starting before the end of the
prompt. The server tokenizes the joined text, so a token that straddles the boundary
(context ``"ab"``, continuation ``"c"`` tokenized as ``"abc"``) is counted as a
continuation token; such cases are logged. The generated extra token is ignored, but it
must be listed: an echo without it is misaligned (llama-cpp-python on a model without
``<bos>``, see :mod:`toolaudit.models._echo`), and each continuation token is then scored
by a completion of the text before it with that token forced.

With ``tokenizer=`` (a local copy of the served model's tokenizer and chat template: a
model folder, a GGUF file or ``embedded:qwen``; see :mod:`toolaudit.models._template`)
the backend also renders chats, so the faults audit and anything else that needs the
exact text runs against the server. Scoring then sends token ids, not text: the
continuation's tokens are exactly the in-process backends' tokens (never merged across
the boundary), read by position from the echo (or vLLM's ``prompt_logprobs``), or by
forced completions where the echo is misaligned; generation renders the chat here and
completes the token ids, so the reply follows the model's own template whatever template
the server would apply. The first request checks the local tokenizer against the server:
the server's ``usage.prompt_tokens`` for a text must equal the local token count, and for
a chat sent to its chat endpoint, the count of the locally rendered chat (one line and a
stop when either differs).

The API key is read from the environment (``OPENAI_API_KEY`` or the variable named by
``api_key_env``) when the client is first needed. It is never part of ``identity``,
never logged, and is masked in every error message.
"""

from __future__ import annotations

import functools
import json
import logging
import math
import os
import random
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from toolaudit.errors import ConfigError, MissingDependencyError, ModelError
from toolaudit.models._base import (
    ChatTurn,
    Generation,
    NoChat,
    ToolSpec,
    checked_logprobs,
    cut_at_stop,
    unsupported,
)
from toolaudit.models._echo import (
    EchoScores,
    echo_by_position,
    echo_values,
    forced_id_request,
    forced_logprob,
    forced_request,
    prompt_logprobs_by_id,
    prompt_logprobs_of,
    read_echo,
)
from toolaudit.models._toolcalls import calls_from_openai, parse_tool_calls

if TYPE_CHECKING:
    from toolaudit.models._template import ServedTokenizer

logger = logging.getLogger(__name__)
T = TypeVar("T")
Endpoint = Literal["completions", "chat"]
ENDPOINTS: tuple[str, ...] = ("completions", "chat")
Scoring = Literal["echo", "prompt_logprobs"]
SCORINGS: tuple[str, ...] = ("echo", "prompt_logprobs")
# What to do when the server refuses a scoring request (e.g. a chat-only API).
SCORING_HINT = (
    "; scoring needs a completions endpoint that returns prompt log-probabilities "
    "(echo with logprobs: vLLM, llama.cpp server); a chat-only API cannot score"
)


def _answer_layout(method: Callable[..., T]) -> Callable[..., T]:
    """A server answer without the OpenAI layout (``choices`` not a list, a missing
    ``logprobs`` block, too few entries) becomes one line naming the server, not a
    Python error from deep in the parsing."""

    @functools.wraps(method)
    def wrapper(self: OpenAIModel, *args: Any, **kwargs: Any) -> T:
        try:
            return method(self, *args, **kwargs)
        except (AttributeError, KeyError, IndexError, TypeError) as exc:
            raise ModelError(
                f"{self.identity}: the server's answer does not have the OpenAI-compatible "
                f"layout ({type(exc).__name__}: {self._mask(_first_line(exc))})"
            ) from None

    return wrapper


#: Identities already warned that their server takes no token-id prompts: a capability
#: warning is logged once per model in a process, however many clients ask.
_TEXT_PROMPT_WARNED: set[str] = set()


#: Seconds per request by default: a remote server, and one on this machine.
REMOTE_TIMEOUT, LOCAL_TIMEOUT = 30.0, 600.0


def default_timeout(base_url: str | None) -> float:
    """The default request timeout for a server at ``base_url``.

    >>> default_timeout("http://localhost:8080/v1"), default_timeout("https://api.example.com/v1")
    (600.0, 30.0)
    """
    from urllib.parse import urlsplit

    try:
        host = urlsplit(base_url or "").hostname or ""
    except ValueError:
        host = ""
    local = host in ("localhost", "127.0.0.1", "::1", "0.0.0.0") or host.startswith("127.")
    return LOCAL_TIMEOUT if local else REMOTE_TIMEOUT


class OpenAIModel(NoChat):
    """A model served behind an OpenAI-compatible HTTP API (no ``render``: the server
    applies its chat template and does not return the text).

    Args:
        model: model name the server knows.
        base_url: e.g. ``http://localhost:8000/v1``; ``None`` uses the SDK default.
        endpoint: ``completions`` (raw text) or ``chat`` (each prompt sent as one user
            message) for :meth:`generate`; scoring always uses completions.
        api_key_env: environment variable that holds the key (none needed locally).
        concurrency: parallel requests (a thread pool).
        timeout: seconds per request (``--request-timeout``); default 30 for a remote
            server and 600 for one on this machine (``localhost``, ``127.0.0.1``,
            ``::1``), where a CPU-served model may take minutes per request and a retry
            after a timeout only queues the same work again.
        max_retries: retries after a connection error, timeout, 429 or 5xx.
        backoff: first retry delay in seconds; doubles each retry, plus up to ``backoff``
            of random jitter; a server's ``Retry-After`` wins when it is longer.
        scoring: ``echo`` (completions with ``echo`` and ``logprobs``; vLLM, llama.cpp)
            or ``prompt_logprobs`` (vLLM's ``prompt_logprobs`` extension, which skips
            the echo path's per-token top-k sort).
        max_retry_time: no retry starts once this many seconds have passed since the
            first try (so a dead server costs at most about this plus one timeout).
        tokenizer: the served model's tokenizer and chat template (a model folder, a
            ``tokenizer.json``, a ``.gguf`` file or ``embedded:qwen``): enables ``render``
            and token-exact scoring and generation (see the module docstring).
        check_template: stop (default) when the server's own template makes another
            token count of the first chat than the local rendering; ``False`` logs a
            warning and goes on.

    Example:
        >>> lm = OpenAIModel("gemma3-270m", "http://localhost:8080/v1")  # doctest: +SKIP
        >>> lm.complete(["2 + 2 ="], max_tokens=3)  # doctest: +SKIP
    """

    no_render = (
        "an OpenAI-compatible server applies its own chat template and does not return "
        "the rendered text; give the served model's tokenizer, e.g. "
        "openai:MODEL@URL,tokenizer=PATH_TO_MODEL_FOLDER (or a .gguf, or embedded:qwen)"
    )

    def __init__(
        self,
        model: str,
        base_url: str | None = None,
        *,
        endpoint: Endpoint = "completions",
        api_key_env: str = "OPENAI_API_KEY",
        concurrency: int = 4,
        timeout: float | None = None,
        max_retries: int = 4,
        backoff: float = 0.5,
        max_retry_time: float = 120.0,
        scoring: Scoring = "echo",
        tokenizer: str | None = None,
        check_template: bool = True,
    ) -> None:
        if endpoint not in ENDPOINTS:
            raise ConfigError.invalid("endpoint", ENDPOINTS, endpoint)
        self.model = model
        self.base_url = base_url.rstrip("/") if base_url else None
        self.endpoint: Endpoint = endpoint
        self.api_key_env = api_key_env
        self.concurrency = max(1, int(concurrency))
        self.timeout = float(timeout) if timeout is not None else default_timeout(base_url)
        self.max_retries = int(max_retries)
        self.backoff = float(backoff)
        self.max_retry_time = float(max_retry_time)
        if scoring not in SCORINGS:
            raise ConfigError.invalid("scoring", SCORINGS, scoring)
        self.scoring: Scoring = scoring
        if not math.isfinite(self.timeout) or self.timeout <= 0:
            raise ConfigError.invalid("timeout", "seconds > 0", timeout)
        self._client: Any = None
        self._secret: str | None = None
        # Whether the server's echo lists log-probabilities at the right positions; None
        # until a response shows it (see toolaudit.models._echo).
        self._echo_aligned: bool | None = None
        self.tokenizer = tokenizer or None
        self.check_template = bool(check_template)
        self._served: ServedTokenizer | None = None
        self._checked_tokens = False
        self._checked_chat = False
        self._token_prompts: bool | None = None

    def __repr__(self) -> str:
        return f"OpenAIModel({self.identity!r})"

    def check_reachable(self, timeout: float = 5.0) -> None:
        """Refuse, in one line and within ``timeout`` seconds, a server nothing answers
        at (a TCP connection to the URL's host and port; no request is sent, so no key is
        needed). Long studies call it before they write anything, so a dead URL is not
        found by a run that hangs on its first request."""
        import socket
        from urllib.parse import urlsplit

        if self.base_url is None:
            return
        try:
            parts = urlsplit(self.base_url)
            host = parts.hostname or ""
            port = parts.port or (443 if parts.scheme == "https" else 80)
        except ValueError as exc:
            raise ModelError(f"openai:{self.model}@{self.base_url}: not a URL ({exc})") from None
        try:
            with socket.create_connection((host, port), timeout=timeout):
                return
        except OSError as exc:
            why = (
                f"no answer within {timeout:g} s"
                if isinstance(exc, TimeoutError)
                else (exc.strerror or str(exc)).lower()
            )
            raise ModelError(
                f"openai:{self.model}@{self.base_url}: no server answers at {host}:{port} "
                f"({why}); start it or correct the URL"
            ) from None

    @property
    def identity(self) -> str:
        """``openai:MODEL@URL`` (``:chat`` appended for the chat endpoint, ``[tokens=DIGEST]``
        with a local tokenizer, whose token-exact scores can differ from text scoring);
        no key."""
        base = f"openai:{self.model}@{self.base_url or 'default'}"
        base += ":chat" if self.endpoint == "chat" else ""
        if self.tokenizer:
            base += f"[tokens={self.served.digest}]"
        return base

    @property
    def served(self) -> ServedTokenizer:
        """The local tokenizer and template (``tokenizer=``); loads on first use."""
        if self._served is None:
            if not self.tokenizer:
                raise unsupported(self.identity, "render a chat", self.no_render)
            from toolaudit.models._template import load_served_tokenizer

            self._served = load_served_tokenizer(self.tokenizer)
        return self._served

    @property
    def echo_aligned(self) -> bool | None:
        """Whether the server's echoed prompt log-probabilities were found aligned
        (``True``), misaligned so that scoring uses forced completions (``False``), or
        not seen yet (``None``); see :mod:`toolaudit.models._echo`."""
        return self._echo_aligned

    def _get_client(self) -> Any:
        if self._client is None:
            try:
                import openai
            except ImportError:
                raise MissingDependencyError("openai", "serve") from None
            key = os.environ.get(self.api_key_env)
            self._secret = key or None
            self._client = openai.OpenAI(
                base_url=self.base_url,
                api_key=key or "EMPTY",  # local servers accept any key
                timeout=self.timeout,
                max_retries=0,  # our own loop retries, with logging that masks the key
            )
        return self._client

    def _mask(self, text: str) -> str:
        if self._secret:
            text = text.replace(self._secret, "***")
        return text

    def _call(self, fn: Callable[[], T], what: str) -> T:
        """``fn()`` with retries (tenacity): after a connection error, a timeout, a 429 or
        a 5xx, wait ``backoff * 2**n`` plus up to ``backoff`` of random jitter, or the
        server's ``Retry-After`` when that is longer; at most ``max_retries`` retries, and
        none that would start after ``max_retry_time`` seconds."""
        import openai
        from tenacity import (
            RetryError,
            Retrying,
            retry_if_exception_type,
            stop_after_attempt,
            stop_before_delay,
        )

        retryable = (
            openai.APIConnectionError,
            openai.APITimeoutError,
            openai.RateLimitError,
            openai.InternalServerError,
        )
        jitter = random.Random()  # timing only: results never depend on it

        def wait(state: Any) -> float:
            exponential = self.backoff * 2 ** (state.attempt_number - 1)
            told = _retry_after(state.outcome.exception() if state.outcome else None)
            return float(max(exponential + jitter.uniform(0, self.backoff), told))

        def log(state: Any) -> None:
            exc = state.outcome.exception() if state.outcome else None
            hint = ""
            if isinstance(exc, openai.APITimeoutError):
                hint = (
                    f" after the {self.timeout:g} s request timeout; a slow server needs "
                    "a longer one (--request-timeout, or ,timeout=SECONDS in the spec)"
                )
            logger.warning(
                "%s: %s failed (%s%s); retry %d in %.1fs",
                self.identity,
                what,
                type(exc).__name__,
                hint,
                state.attempt_number,
                state.upcoming_sleep,
            )

        start = time.monotonic()
        retrying = Retrying(
            retry=retry_if_exception_type(retryable),
            stop=stop_after_attempt(self.max_retries + 1) | stop_before_delay(self.max_retry_time),
            wait=wait,
            before_sleep=log,
            reraise=False,
        )
        try:
            for attempt in retrying:  # ends after the first attempt that returns
                with attempt:
                    result = fn()
            return result
        except RetryError as err:
            exc = err.last_attempt.exception() or err
            tries = err.last_attempt.attempt_number
            spent = time.monotonic() - start
            raise ModelError(
                f"{self.identity}: {what} failed after {tries} tries in "
                f"{spent:.0f}s ({type(exc).__name__}: {self._mask(_first_line(exc))}); "
                "check that the server is running at that URL and serves that model"
            ) from None
        except ValueError as exc:  # the SDK could not parse the answer (not JSON)
            raise ModelError(
                f"{self.identity}: {what}: the server's answer is not JSON "
                f"({self._mask(_first_line(exc))}); is this an OpenAI-compatible endpoint?"
            ) from None
        except openai.OpenAIError as exc:  # not retryable: tenacity re-raises it at once
            refused = (
                openai.NotFoundError,
                openai.BadRequestError,
                openai.UnprocessableEntityError,
            )
            hint = SCORING_HINT if "scoring" in what and isinstance(exc, refused) else ""
            raise ModelError(
                f"{self.identity}: {what} failed: {self._mask(_first_line(exc))}{hint}"
            ) from None
        raise AssertionError("unreachable")  # pragma: no cover

    def _map(self, fn: Callable[[Any], T], items: Sequence[Any]) -> list[T]:
        if self.concurrency == 1 or len(items) <= 1:
            return [fn(x) for x in items]
        with ThreadPoolExecutor(max_workers=min(self.concurrency, len(items))) as pool:
            return list(pool.map(fn, items))

    # -- scoring ---------------------------------------------------------------------
    @_answer_layout
    def loglikelihood(self, requests: Sequence[tuple[str, str]]) -> list[list[float]]:
        """Per-token log-probabilities of each continuation (prompt echo with logprobs)."""
        client = self._get_client()
        if self.tokenizer:
            served = self.served
            pairs = [(served.encode_context(c), served.encode_continuation(k)) for c, k in requests]
            if pairs:
                self._check_tokens(client, requests[0][0], pairs[0][0])
            scores = self._map(lambda p: self._score_ids(client, p[0], p[1]), pairs)
        else:
            scores = self._map(lambda r: self._score_one(client, r[0], r[1]), list(requests))
        return checked_logprobs(f"{self.identity} (server answer)", requests, scores)

    def _check_tokens(self, client: Any, text: str, ids: list[int]) -> None:
        """Once: the server's token count of ``text`` must be the local one."""
        if self._checked_tokens:
            return
        resp = self._call(
            lambda: client.completions.create(
                model=self.model, prompt=text, max_tokens=1, temperature=0
            ),
            "tokenizer check",
        )
        counted = getattr(getattr(resp, "usage", None), "prompt_tokens", None)
        self._checked_tokens = True
        if not isinstance(counted, int):
            logger.info("%s: the server reports no prompt token count; not checked", self.model)
            return
        if counted != len(ids):
            raise ModelError(
                f"{self.identity}: tokenizer={self.tokenizer} makes {len(ids)} tokens of a "
                f"{len(text)}-character prompt, the server {counted}; give the served "
                "model's own tokenizer"
            )

    def _takes_ids(self, client: Any, ids: list[int]) -> bool:
        """Once: whether the server takes a token-id prompt (vLLM, SGLang and the OpenAI
        API do; llama-cpp-python's server answers a validation error)."""
        if self._token_prompts is None:
            import openai

            try:
                client.completions.create(model=self.model, prompt=ids[:1], max_tokens=1)
                self._token_prompts = True
            except (openai.BadRequestError, openai.UnprocessableEntityError):
                self._token_prompts = False
            except openai.InternalServerError as exc:
                if "validation" not in str(exc).lower():
                    raise
                self._token_prompts = False
            if not self._token_prompts and self.identity not in _TEXT_PROMPT_WARNED:
                _TEXT_PROMPT_WARNED.add(self.identity)  # once per model, not per request
                logger.warning(
                    "%s: the server does not take token-id prompts; prompts go as text and the "
                    "server tokenizes them (a scored token may merge across the boundary of "
                    "context and continuation)",
                    self.identity,
                )
        return self._token_prompts

    def _score_ids(self, client: Any, ctx: list[int], cont: list[int]) -> list[float]:
        """Log-probabilities of ``cont`` after ``ctx``, read by token position."""
        if not cont:
            return []
        ids = ctx + cont
        if not self._takes_ids(client, ids):
            served = self.served
            context = served.decode(ctx, skip_special_tokens=False)
            continuation = served.decode(cont, skip_special_tokens=False)
            return self._score_one(client, context, continuation, cont_ids=cont)
        if self.scoring == "prompt_logprobs":
            resp = self._prompt_logprobs_request(client, ids)
            return prompt_logprobs_by_id(resp, ids, len(ctx), source=self.identity)
        if self._echo_aligned is not False:
            resp = self._call(
                lambda: client.completions.create(
                    model=self.model, prompt=ids, echo=True, logprobs=1, max_tokens=1, temperature=0
                ),
                "scoring",
            )
            values = echo_by_position(resp, len(ids), len(ctx), source=self.identity)
            if values is not None:
                self._echo_aligned = True
                return values
            logger.info(
                "%s: echoed log-probabilities are misaligned (no entry for the generated "
                "token); scoring by forced completions from now on",
                self.identity,
            )
            self._echo_aligned = False
        out = []
        for j, token in enumerate(cont):
            resp = self._forced(client, forced_id_request(ctx + cont[:j], token))
            out.append(forced_logprob(resp, token=None, source=self.identity))
        return out

    def _forced(self, client: Any, kwargs: dict[str, Any]) -> Any:
        """One forced completion, streamed, and its chunk that carries log-probabilities.

        Streamed because llama-cpp-python then takes the log-softmax of the one position
        it generates from; unstreamed, it takes it over every position it holds (about
        5 s a request at 2,400 positions and a 151,936-token vocabulary, measured).
        Other servers return the same numbers either way."""

        def send() -> Any:
            chunks = list(client.completions.create(model=self.model, stream=True, **kwargs))
            for chunk in chunks:
                lp = chunk.choices[0].logprobs if chunk.choices else None
                if lp is not None and lp.tokens:
                    return chunk
            return chunks[0] if chunks else None

        return self._call(send, "forced scoring")

    def _prompt_logprobs_request(self, client: Any, prompt: str | list[int]) -> Any:
        return self._call(
            lambda: client.completions.create(
                model=self.model,
                prompt=prompt,
                max_tokens=1,
                temperature=0,
                extra_body={"prompt_logprobs": 0},
            ),
            "scoring",
        )

    def _score_one(
        self,
        client: Any,
        context: str,
        continuation: str,
        cont_ids: Sequence[int] | None = None,
    ) -> list[float]:
        """``cont_ids``: the continuation's ids from the local tokenizer, when there is
        one; the forced path then tokenizes it locally (see :func:`_pieces`)."""
        prompt = context + continuation
        if self.scoring == "prompt_logprobs":
            resp = self._prompt_logprobs_request(client, prompt)
            return prompt_logprobs_of(resp, context=context, prompt=prompt, source=self.identity)
        if self._echo_aligned is None:
            self._probe_echo(client)
        if self._echo_aligned is False:
            return self._forced_scores(client, context, continuation, cont_ids)
        echo = self._echo(client, prompt, context=context)
        if echo.aligned:
            self._echo_aligned = True
            return echo_values(echo, source=self.identity)
        if echo.decisive:
            logger.info(
                "%s: echoed log-probabilities are misaligned (no entry for the generated "
                "token); scoring by forced completions from now on",
                self.identity,
            )
            self._echo_aligned = False
        return self._forced_scores(client, context, continuation, cont_ids)

    def _probe_echo(self, client: Any) -> None:
        """Learn whether the server's echo is aligned from a 3-token prompt, before a long
        prompt is echoed: a misaligned echo is discarded, and llama-cpp-python's echo
        costs minutes at a few thousand tokens (a Python sort of the vocabulary per
        prompt token), which the forced path avoids."""
        echo = self._echo(client, "Hello, world", context="Hello,")
        if echo.decisive:
            self._echo_aligned = echo.aligned
            if not echo.aligned:
                logger.info(
                    "%s: echoed log-probabilities are misaligned (no entry for the generated "
                    "token); scoring by forced completions",
                    self.identity,
                )

    def _echo(self, client: Any, prompt: str, *, context: str) -> EchoScores:
        resp = self._call(
            lambda: client.completions.create(
                model=self.model, prompt=prompt, echo=True, logprobs=1, max_tokens=1, temperature=0
            ),
            "scoring",
        )
        return read_echo(resp, context=context, prompt=prompt, source=self.identity)

    def _forced_scores(
        self,
        client: Any,
        context: str,
        continuation: str,
        cont_ids: Sequence[int] | None = None,
    ) -> list[float]:
        """Each continuation token's log-probability from a completion of the text before
        it with that token forced; the continuation is tokenized on its own, so a token
        never straddles the context boundary: by the local tokenizer (``cont_ids``) when
        there is one, else by an echo of it alone. The echo costs more than its own
        tokens: it replaces the server's cached prompt, so the next forced completion
        reads the whole context again (minutes at a few thousand tokens on a CPU)."""
        pieces = _pieces(self.served, cont_ids, continuation) if cont_ids is not None else None
        if pieces is None:
            own = self._echo(client, continuation, context="")
            pieces = list(zip(own.tokens, own.offsets, strict=True))
        values = []
        for token, offset in pieces:
            kwargs = forced_request(context + continuation[:offset], token, source=self.identity)
            resp = self._forced(client, kwargs)
            values.append(forced_logprob(resp, token=token, source=self.identity))
        return values

    # -- chat ----------------------------------------------------------------------
    @property
    def capabilities(self) -> frozenset[str]:
        """``loglikelihood`` (completions echo), ``generate`` and ``tools`` (chat), and
        ``render`` with a local tokenizer (``tokenizer=``)."""
        caps = {"loglikelihood", "generate", "tools"}
        return frozenset(caps | {"render"} if self.tokenizer else caps)

    def render(
        self,
        messages: Sequence[ChatTurn],
        tools: Sequence[ToolSpec] | None = None,
        *,
        add_generation_prompt: bool = True,
    ) -> str:
        """The chat as the served model's template writes it (needs ``tokenizer=``); the
        first chat rendered with a generation prompt is checked against the server's own
        template (its ``usage.prompt_tokens`` for the same chat)."""
        if not self.tokenizer:
            return super().render(messages, tools, add_generation_prompt=add_generation_prompt)
        text = self.served.render(messages, tools, add_generation_prompt=add_generation_prompt)
        if add_generation_prompt and not self._checked_chat:
            self._check_chat(messages, tools, text)
        return text

    def _check_chat(
        self, messages: Sequence[ChatTurn], tools: Sequence[ToolSpec] | None, text: str
    ) -> None:
        """Once: the server's own template must make as many tokens of the chat as the
        local rendering."""
        client = self._get_client()
        kwargs: dict[str, Any] = {
            "model": self.model,
            "messages": [_wire_message(m) for m in messages],
            "max_tokens": 1,
            "temperature": 0,
        }
        if tools:
            kwargs["tools"] = list(tools)
        resp = self._call(lambda: client.chat.completions.create(**kwargs), "template check")
        counted = getattr(getattr(resp, "usage", None), "prompt_tokens", None)
        self._checked_chat = True
        if not isinstance(counted, int):
            logger.info("%s: the server reports no prompt token count; not checked", self.model)
            return
        local = len(self.served.encode_context(text))
        if counted == local:
            return
        wire = [_wire_message(m) for m in messages]
        as_text = self.served.render(wire, tools, parse_arguments=False)
        why = (
            "the server writes tool-call arguments into the template as JSON text, not "
            "as objects (llama-cpp-python's server does): the agent there sees other text"
            if len(self.served.encode_context(as_text)) == counted
            else "give the served model's tokenizer folder, or serve the model with its "
            "own chat template"
        )
        hint = "; check_template=false goes on knowingly" if self.check_template else ""
        message = (
            f"{self.identity}: the chat renders to {local} tokens with "
            f"tokenizer={self.tokenizer} but to {counted} with the server's own template; {why}"
        )
        if self.check_template:
            raise ModelError(message + hint)
        logger.warning("%s (check_template=false: going on)", message)

    @_answer_layout
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
        """A chat reply through ``chat/completions`` with ``tools``; the server's
        ``tool_calls`` are taken as they are, and calls written into the text are parsed.
        With ``tokenizer=``, the chat is rendered here and its token ids completed, so the
        reply follows the model's own template."""
        client = self._get_client()
        if self.tokenizer:
            return self._generate_rendered(
                client, messages, tools, max_tokens, temperature, seed, stop
            )
        kwargs: dict[str, Any] = {
            "model": self.model,
            "messages": [_wire_message(m) for m in messages],
            "max_tokens": max_tokens,
            "temperature": float(temperature),
        }
        if tools:
            kwargs["tools"] = list(tools)
        if seed is not None:
            kwargs["seed"] = int(seed)
        if any(stop):
            kwargs["stop"] = [s for s in stop if s]
        resp = self._call(lambda: client.chat.completions.create(**kwargs), "chat generation")
        if not resp.choices:
            raise ModelError(f"{self.identity}: chat generation returned no choices")
        choice = resp.choices[0]
        raw = cut_at_stop(choice.message.content or "", stop)
        native, native_errors = calls_from_openai(choice.message.tool_calls)
        parsed = parse_tool_calls(raw)
        calls = native or parsed.tool_calls
        reason = "tool_calls" if calls else str(choice.finish_reason or "stop")
        return Generation(
            text=parsed.text if not native else raw.strip(),
            tool_calls=tuple(calls),
            raw=raw,
            parse_errors=native_errors + parsed.parse_errors,
            finish_reason="length" if reason == "length" else reason,
        )

    def _generate_rendered(
        self,
        client: Any,
        messages: Sequence[ChatTurn],
        tools: Sequence[ToolSpec] | None,
        max_tokens: int,
        temperature: float,
        seed: int | None,
        stop: Sequence[str],
    ) -> Generation:
        prompt = self.render(messages, tools)
        ids = self.served.encode_context(prompt)
        self._check_tokens(client, prompt, ids)
        kwargs: dict[str, Any] = {
            "model": self.model,
            "prompt": ids if self._takes_ids(client, ids) else prompt,
            "max_tokens": max_tokens,
            "temperature": float(temperature),
        }
        if seed is not None:
            kwargs["seed"] = int(seed)
        if any(stop):
            kwargs["stop"] = [s for s in stop if s]
        resp = self._call(lambda: client.completions.create(**kwargs), "generation")
        if not resp.choices:
            raise ModelError(f"{self.identity}: generation returned no choices")
        choice = resp.choices[0]
        raw = cut_at_stop(choice.text or "", stop)
        parsed = parse_tool_calls(raw)
        reason = "tool_calls" if parsed.tool_calls else str(choice.finish_reason or "stop")
        return Generation(
            text=parsed.text,
            tool_calls=tuple(parsed.tool_calls),
            raw=raw,
            parse_errors=tuple(parsed.parse_errors),
            finish_reason="length" if reason == "length" else reason,
        )

    # -- completion ----------------------------------------------------------------
    @_answer_layout
    def complete(
        self, prompts: Sequence[str], *, max_tokens: int = 32, stop: Sequence[str] = ()
    ) -> list[str]:
        """Greedy (temperature 0) completions, concurrently, cut at the first stop string."""
        client = self._get_client()
        stops = [s for s in stop if s] or None

        def one(prompt: str) -> str:
            if self.endpoint == "chat":
                resp = self._call(
                    lambda: client.chat.completions.create(
                        model=self.model,
                        messages=[{"role": "user", "content": prompt}],
                        max_tokens=max_tokens,
                        temperature=0,
                        stop=stops,
                    ),
                    "chat completion",
                )
                text = resp.choices[0].message.content or ""
            else:
                resp = self._call(
                    lambda: client.completions.create(
                        model=self.model,
                        prompt=prompt,
                        max_tokens=max_tokens,
                        temperature=0,
                        stop=stops,
                    ),
                    "completion",
                )
                text = resp.choices[0].text or ""
            return cut_at_stop(text, stop)

        return self._map(one, list(prompts))


def _pieces(served: ServedTokenizer, ids: Sequence[int], text: str) -> list[tuple[str, int]] | None:
    """The continuation's tokens as (text, character offset), from the local tokenizer;
    None when its tokens do not map one to one onto ``text`` (a token holding part of a
    UTF-8 character, or a decode that does not give ``text`` back), where the server's
    echo tokenizes it instead."""
    out: list[tuple[str, int]] = []
    done = ""
    for j in range(len(ids)):
        upto = served.decode(ids[: j + 1], skip_special_tokens=False)
        piece = upto[len(done) :]
        if not upto.startswith(done) or not piece or "\ufffd" in piece:
            return None
        out.append((piece, len(done)))
        done = upto
    return out if done == text else None


def _retry_after(exc: BaseException | None) -> float:
    """Seconds a 429/503 answer asks the client to wait (``Retry-After`` as seconds or an
    HTTP date, or ``retry-after-ms``); 0 when it asks nothing."""
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None)
    if headers is None:
        return 0.0
    try:
        if headers.get("retry-after-ms"):
            return max(0.0, float(headers["retry-after-ms"]) / 1000.0)
        value = headers.get("retry-after")
        if not value:
            return 0.0
        try:
            return max(0.0, float(value))
        except ValueError:
            from email.utils import parsedate_to_datetime

            when = parsedate_to_datetime(value)
            return max(0.0, when.timestamp() - time.time())
    except (TypeError, ValueError, OverflowError):
        return 0.0


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _wire_message(m: ChatTurn) -> ChatTurn:
    """An OpenAI wire message: tool-call arguments as JSON strings, content never None."""
    out = ChatTurn(**m)
    if out.get("tool_calls"):
        calls = []
        for tc in out["tool_calls"]:
            tc = dict(tc)
            fn = dict(tc.get("function") or {})
            if not isinstance(fn.get("arguments"), str):
                fn["arguments"] = json.dumps(fn.get("arguments") or {})
            tc["function"] = fn
            tc.setdefault("type", "function")
            calls.append(tc)
        out["tool_calls"] = calls
    if out.get("content") is None:
        out["content"] = ""
    return out


def load_openai(target: str, **options: Any) -> OpenAIModel:
    """Registry factory for ``openai:MODEL@URL`` (``openai:MODEL`` uses the SDK default)."""
    model, at, url = target.rpartition("@")
    if not at:
        model, url = target, ""
    if not model:
        raise ModelError(
            f"openai: spec needs a model name, e.g. openai:gpt-4o-mini; got {target!r}"
        )
    base = url or os.environ.get("OPENAI_BASE_URL")
    if base:
        _check_url(base, target)
    return OpenAIModel(model, base, **options)


def _check_url(url: str, target: str) -> None:
    """One line for a server URL that cannot be a server's (scheme, host, port)."""
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(url)
        _ = parts.port  # raises on a malformed port or IPv6 literal
    except ValueError as exc:
        raise ModelError(f"openai:{target}: bad server URL {url!r} ({exc})") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ModelError(f"openai:{target}: bad server URL {url!r}; give http(s)://HOST[:PORT]/v1")

"""The OpenAI-compatible backend against a real llama.cpp server (llama-cpp-python)
serving the same GGUF file as the embedded transformers model.

Agreement tolerance, HF (Q4_K_M dequantized to float32) vs llama.cpp (quantized
kernels): identical tokenization of every continuation; per-text mean surprisal within
0.10 nats/token; pooled mean surprisal within 0.06 nats/token; per-token Pearson
correlation at least 0.99.
"""

from __future__ import annotations

import logging
import time
from types import SimpleNamespace

import pytest

from tests.models.conftest import LLAMA_ALIAS, LLAMA_KEY, LLAMA_KEY_ENV
from toolaudit.errors import ModelError
from toolaudit.models import CachedModel, load_model
from toolaudit.models._compare import score_agreement
from toolaudit.models._echo import (
    continuation_logprobs,
    forced_logprob,
    forced_request,
    read_echo,
)

pytestmark = pytest.mark.llama

TEXTS = [
    ("The customer asked for a refund", " because the item arrived damaged."),
    ("Order #W123 was shipped", " to the address on file in Boston."),
    ("def add(a, b):", "\n    return a + b"),
]
PER_TEXT_TOL = 0.10
POOLED_TOL = 0.06
MIN_CORR = 0.99


@pytest.fixture(scope="module")
def server_model(llama_server):
    return load_model(
        f"openai:{LLAMA_ALIAS}@{llama_server}",
        api_key_env=LLAMA_KEY_ENV,
        concurrency=3,
        timeout=300.0,  # a loaded 2-core machine; the 30 s default is for real servers
    )


@pytest.fixture(scope="module")
def llama_scores(server_model) -> list[list[float]]:
    return server_model.loglikelihood(TEXTS)


def test_openai_scores_agree_with_hf_within_tolerance(
    llama_scores, server_model, hf_model, embedded_lm
):
    _, tok = embedded_lm
    hf_scores = hf_model.loglikelihood(TEXTS)
    for (_, cont), lo, hf in zip(TEXTS, llama_scores, hf_scores, strict=True):
        assert len(lo) == len(hf) == len(tok(cont, add_special_tokens=False)["input_ids"])
    agree = score_agreement(llama_scores, hf_scores)
    assert agree.tokens == sum(len(s) for s in hf_scores)
    assert server_model.echo_aligned is True  # Gemma adds <bos>: the echo is read as is
    assert agree.max_text_delta <= PER_TEXT_TOL
    assert agree.pooled_delta <= POOLED_TOL
    assert agree.correlation >= MIN_CORR


def test_openai_server_tokens_equal_hf_tokens(llama_server, embedded_lm):
    import openai

    _, tok = embedded_lm
    client = openai.OpenAI(base_url=llama_server, api_key=LLAMA_KEY)
    context, cont = TEXTS[2]
    resp = client.completions.create(
        model=LLAMA_ALIAS, prompt=context + cont, echo=True, logprobs=1, max_tokens=1
    )
    lp = resp.choices[0].logprobs
    server_tokens = [
        t
        for t, off in zip(lp.tokens, lp.text_offset, strict=True)
        if len(context) <= off < len(context + cont)
    ]
    hf_tokens = [tok.decode([i]) for i in tok(cont, add_special_tokens=False)["input_ids"]]
    assert server_tokens == hf_tokens


def test_openai_generate_greedy_is_repeatable_and_cut_at_stop(server_model):
    # llama.cpp reuses the KV prefix of its previous request, which can flip near-ties in
    # greedy decoding; this prompt has no near-tie in its first five tokens.
    prompt = ["The capital of France is"]
    first = server_model.complete(prompt, max_tokens=5)
    again = server_model.complete(prompt, max_tokens=5)
    assert again == first and len(first[0].split()) >= 3
    word = first[0].split()[2]
    cut = server_model.complete(prompt, max_tokens=5, stop=[word])
    assert cut == [first[0][: first[0].index(word)]]
    both = server_model.complete(["Hello", "Once upon a time"], max_tokens=2)
    assert len(both) == 2 and all(isinstance(t, str) and t for t in both)


def test_openai_chat_endpoint_returns_text(llama_server):
    chat = load_model(
        f"openai:{LLAMA_ALIAS}@{llama_server}",
        api_key_env=LLAMA_KEY_ENV,
        endpoint="chat",
        timeout=300.0,
    )
    assert chat.identity.endswith(":chat")
    (text,) = chat.complete(["Say the word hello."], max_tokens=4)
    assert isinstance(text, str)


def test_openai_api_key_never_in_identity_logs_or_cache(llama_server, tmp_path, caplog):
    caplog.set_level(logging.DEBUG)
    lm = load_model(
        f"openai:{LLAMA_ALIAS}@{llama_server}", api_key_env=LLAMA_KEY_ENV, timeout=300.0
    )
    cached = CachedModel(lm, tmp_path / "cache.sqlite")
    cached.loglikelihood([("Hello", " world")])
    cached.complete(["Hello"], max_tokens=2)
    assert cached.calls == {"made": 2, "cached": 0}
    cached.cache.close()
    for blob in (lm.identity, repr(lm), caplog.text):
        assert LLAMA_KEY not in blob
    for f in tmp_path.iterdir():
        assert LLAMA_KEY.encode() not in f.read_bytes()


def test_openai_wrong_key_error_masks_the_key(llama_server, monkeypatch):
    wrong = "sk-wrong-key-0123456789"
    monkeypatch.setenv("TOOLAUDIT_TEST_WRONG_KEY", wrong)
    lm = load_model(f"openai:{LLAMA_ALIAS}@{llama_server}", api_key_env="TOOLAUDIT_TEST_WRONG_KEY")
    with pytest.raises(ModelError) as err:
        lm.complete(["Hello"], max_tokens=1)
    assert wrong not in str(err.value)
    assert "401" in str(err.value) or "auth" in str(err.value).lower()


def test_openai_unreachable_server_retries_with_backoff(caplog):
    lm = load_model("openai:m@http://127.0.0.1:9/v1", max_retries=2, backoff=0.05, timeout=2.0)
    start = time.monotonic()
    with pytest.raises(ModelError, match="after 3 tries"):
        lm.complete(["x"], max_tokens=1)
    assert time.monotonic() - start >= 0.05 + 0.1
    assert sum("retry" in r.message for r in caplog.records) == 2


def test_continuation_logprobs_selects_tokens_by_offset():
    resp = SimpleNamespace(
        choices=[
            SimpleNamespace(
                logprobs=SimpleNamespace(
                    tokens=["Hel", "lo", " wor", "ld", "!"],
                    text_offset=[0, 3, 5, 9, 11],
                    token_logprobs=[None, -1.0, -2.0, -3.0, -4.0],
                )
            )
        ]
    )
    # "!" is the generated token after the prompt and is ignored.
    assert continuation_logprobs(resp, context="Hello", prompt="Hello world", source="t") == [
        -2.0,
        -3.0,
    ]
    # A token straddling the boundary ("lo" covers 3..5, context ends at 4) is counted.
    assert continuation_logprobs(resp, context="Hell", prompt="Hello world", source="t") == [
        -1.0,
        -2.0,
        -3.0,
    ]
    with pytest.raises(ModelError, match="first prompt token"):
        continuation_logprobs(resp, context="", prompt="Hello world", source="t")


def test_prompt_logprobs_of_reads_vllm_layout_by_decoded_tokens():
    from toolaudit.models._echo import prompt_logprobs_of

    def entry(tok: str, lp: float) -> dict:
        return {"17": {"logprob": lp, "rank": 1, "decoded_token": tok}}

    resp = SimpleNamespace(
        choices=[
            SimpleNamespace(
                prompt_logprobs=[None, entry("lo", -1.0), entry(" wor", -2.0), entry("ld", -3.0)]
            )
        ]
    )
    # "Hel" is the first token (no value); offsets come from the decoded tokens.
    assert prompt_logprobs_of(resp, context="Hello", prompt="Hello world", source="t") == [
        -2.0,
        -3.0,
    ]
    assert prompt_logprobs_of(resp, context="Hell", prompt="Hello world", source="t") == [
        -1.0,
        -2.0,
        -3.0,
    ]
    with pytest.raises(ModelError, match="do not rebuild the prompt"):
        prompt_logprobs_of(resp, context="Hello", prompt="Hello there", source="t")
    empty = SimpleNamespace(choices=[SimpleNamespace(prompt_logprobs=None)])
    with pytest.raises(ModelError, match="vLLM extension"):
        prompt_logprobs_of(empty, context="a", prompt="ab", source="t")


def _echo_resp(tokens, offsets, values, *, completion_tokens):
    lp = SimpleNamespace(tokens=tokens, text_offset=offsets, token_logprobs=values)
    usage = SimpleNamespace(prompt_tokens=len(tokens), completion_tokens=completion_tokens)
    return SimpleNamespace(choices=[SimpleNamespace(logprobs=lp)], usage=usage)


def test_read_echo_flags_an_echo_without_its_generated_token_as_misaligned():
    # llama-cpp-python's layout for a model without <bos>: only the prompt tokens are
    # listed although a token was generated; each value is log P(next token = this one).
    resp = _echo_resp(
        ["Hel", "lo", " wor", "ld"], [0, 3, 5, 9], [None, -9.0, -8.0, -7.0], completion_tokens=1
    )
    echo = read_echo(resp, context="Hello", prompt="Hello world", source="t")
    assert (echo.aligned, echo.decisive) == (False, True)
    assert echo.tokens == (" wor", "ld") and echo.offsets == (5, 9)
    with pytest.raises(ModelError, match="not aligned"):
        continuation_logprobs(resp, context="Hello", prompt="Hello world", source="t")
    # The server stopped at once (end of sequence): nothing listed either way, undecided.
    stopped = _echo_resp(
        ["Hel", "lo", " wor", "ld"], [0, 3, 5, 9], [None, -1.0, -2.0, -3.0], completion_tokens=0
    )
    echo = read_echo(stopped, context="Hello", prompt="Hello world", source="t")
    assert (echo.aligned, echo.decisive) == (False, False)


def test_forced_request_and_logprob_check_the_forced_token():
    kwargs = forced_request("Hello", " wor", source="t")
    assert kwargs["prompt"] == "Hello" and kwargs["max_tokens"] == 1
    assert kwargs["logit_bias"] == {" wor": 100.0}
    assert kwargs["extra_body"] == {"logit_bias_type": "tokens"}
    with pytest.raises(ModelError, match="non-empty context"):
        forced_request("", "Hel", source="t")

    def resp(token):
        lp = SimpleNamespace(tokens=[token], text_offset=[5], token_logprobs=[-2.5])
        return SimpleNamespace(choices=[SimpleNamespace(logprobs=lp)])

    assert forced_logprob(resp(" wor"), token=" wor", source="t") == -2.5
    with pytest.raises(ModelError, match="could not force the token ' wor'"):
        forced_logprob(resp(" there"), token=" wor", source="t")


def test_openai_client_waits_what_retry_after_asks(caplog):
    # A local server answers 429 with Retry-After: 1 twice, then a completion: the client
    # waits at least the asked second each time (backoff alone would be 0.01 s).
    import json
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    hits: list[float] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):  # noqa: N802 - http.server's naming
            self.rfile.read(int(self.headers.get("content-length") or 0))
            hits.append(time.monotonic())
            if len(hits) <= 2:
                body, code, extra = (
                    b'{"error": {"message": "slow down"}}',
                    429,
                    {"Retry-After": "1"},
                )
            else:
                body, code, extra = (
                    json.dumps(
                        {
                            "id": "c",
                            "object": "text_completion",
                            "created": 0,
                            "model": "m",
                            "choices": [{"index": 0, "text": " ok", "finish_reason": "stop"}],
                        }
                    ).encode(),
                    200,
                    {},
                )
            self.send_response(code)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(body)))
            for k, v in extra.items():
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/v1"
        lm = load_model(f"openai:m@{url}", max_retries=3, backoff=0.01, timeout=5.0)
        assert lm.complete(["x"], max_tokens=1) == [" ok"]
    finally:
        server.shutdown()
    assert len(hits) == 3
    assert hits[1] - hits[0] >= 0.95 and hits[2] - hits[1] >= 0.95
    assert sum("retry" in r.message for r in caplog.records) == 2


@pytest.mark.parametrize(
    ("body", "says"),
    [
        (b"this is {not json", "the server's answer is not JSON"),
        (b'{"choices": "nope"}', "does not have the OpenAI-compatible layout"),
    ],
)
def test_a_server_answering_garbage_is_one_line_naming_it(body: bytes, says: str) -> None:
    import http.server
    import threading

    from toolaudit.errors import ModelError
    from toolaudit.models import load_model

    class Garbage(http.server.BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("content-length", 0)))
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    server = http.server.HTTPServer(("127.0.0.1", 0), Garbage)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/v1"
        lm = load_model(f"openai:m@{url},timeout=5")
        with pytest.raises(ModelError) as info:
            lm.loglikelihood([("hello", " world")])
    finally:
        server.shutdown()
    assert url in str(info.value) and says in str(info.value) and "\n" not in str(info.value)


def test_a_slow_local_server_gets_a_long_default_timeout_and_a_hint_when_it_times_out(
    caplog: pytest.LogCaptureFixture,
) -> None:
    import http.server
    import threading

    from toolaudit.errors import ModelError

    assert load_model("openai:m@http://localhost:8080/v1").timeout == 600.0
    assert load_model("openai:m@https://api.example.com/v1").timeout == 30.0
    release = threading.Event()

    class Slow(http.server.BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("content-length", 0)))
            release.wait(5)  # longer than the client's timeout

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Slow)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/v1"
        lm = load_model(f"openai:m@{url},timeout=0.3,max_retries=1,backoff=0.01")
        with pytest.raises(ModelError, match="APITimeoutError"):
            lm.complete(["x"], max_tokens=1)
    finally:
        release.set()
        server.shutdown()
    (warning,) = [r.message for r in caplog.records if "retry" in r.message]
    assert "after the 0 s request timeout" not in warning  # rounded, but never to nothing
    assert "a slow server needs a longer one (--request-timeout" in warning

"""The embedded Qwen scored by the transformers backend and by a real llama.cpp server on
the same GGUF file, held to the tolerances used for Gemma (test_openai.py): identical
tokenization of every continuation, per-text mean surprisal within 0.10 nats/token,
pooled within 0.06, per-token Pearson correlation at least 0.99. The server's echoed
prompt log-probabilities are misaligned for Qwen (no <bos>; see models/_echo.py), so this
exercises the forced-completion path. Also a chat reply with tools through the server's
chat endpoint."""

from __future__ import annotations

import pytest

from tests.models.conftest import LLAMA_KEY_ENV, QWEN_ALIAS
from tests.models.test_openai import MIN_CORR, PER_TEXT_TOL, POOLED_TOL
from toolaudit.errors import ModelError
from toolaudit.models import Generation, load_model
from toolaudit.models._compare import score_agreement

pytestmark = [pytest.mark.llama, pytest.mark.model]

TEXTS = [
    ("The customer asked for a refund", " because the item arrived damaged."),
    ("Order #W123 was shipped", " to the address on file in Boston."),
    ("def add(a, b):", "\n    return a + b"),
]


@pytest.fixture(scope="module")
def qwen_server_model(qwen_llama_server):
    return load_model(
        f"openai:{QWEN_ALIAS}@{qwen_llama_server}",
        api_key_env=LLAMA_KEY_ENV,
        concurrency=1,
        timeout=600.0,
        max_retries=0,
    )


def test_qwen_server_scores_agree_with_hf_within_gemma_tolerances(qwen_server_model, qwen):
    served = qwen_server_model.loglikelihood(TEXTS)
    # llama-cpp-python's echo is misaligned for a model without <bos> (Qwen): detected
    # from the response, so the backend scored by forced completions instead.
    assert qwen_server_model.echo_aligned is False
    local = qwen.loglikelihood(TEXTS)
    for (_, cont), a, b in zip(TEXTS, served, local, strict=True):
        assert len(a) == len(b) == len(qwen.encode_continuation(cont))
    agree = score_agreement(served, local)
    assert agree.max_text_delta <= PER_TEXT_TOL
    assert agree.pooled_delta <= POOLED_TOL
    assert agree.correlation >= MIN_CORR


def test_qwen_server_chat_reply_is_the_parsed_tool_call(qwen_server_model):
    from tests.models.test_chat import ASK, TOOLS

    gen = qwen_server_model.generate(ASK, TOOLS, max_tokens=48)
    assert isinstance(gen, Generation)
    # The server renders the tools with the GGUF's own template; the greedy reply is the
    # same call the transformers backend makes (test_chat.py), parsed from the text.
    assert [(c.name, c.arguments) for c in gen.tool_calls] == [
        ("get_order_details", {"order_id": "#W2378156"})
    ]
    assert gen.finish_reason == "tool_calls" and gen.parse_errors == ()
    assert qwen_server_model.capabilities == frozenset({"loglikelihood", "generate", "tools"})


# -- tokenizer=: the chat rendered here, checked against the server's own template -----
def _with_tokenizer(url: str, **extra: str):
    options = ",".join(f"{k}={v}" for k, v in extra.items())
    spec = f"openai:{QWEN_ALIAS}@{url},tokenizer=embedded:qwen" + (f",{options}" if options else "")
    return load_model(spec, api_key_env=LLAMA_KEY_ENV, concurrency=1, timeout=600.0, max_retries=0)


def test_tokenizer_renders_as_the_server_template_does(qwen_llama_server, qwen):
    from tests.models.test_chat import ASK, TOOLS

    lm = _with_tokenizer(qwen_llama_server)
    assert "render" in lm.capabilities
    # The first rendered chat is sent to the server's chat endpoint: its prompt token
    # count equals the local rendering's, or render() stops.
    assert lm.render(ASK, TOOLS) == qwen.render(ASK, TOOLS)


def test_a_server_template_that_differs_is_refused_with_its_cause(qwen_llama_server):
    from tests.models.test_chat import HISTORY, TOOLS

    # llama-cpp-python's server hands tool-call arguments to the template as JSON text
    # (transformers and vLLM parse them), so a history with a tool call renders otherwise.
    with pytest.raises(ModelError, match="arguments into the template as JSON text"):
        _with_tokenizer(qwen_llama_server).render(HISTORY, TOOLS)
    lm = _with_tokenizer(qwen_llama_server, check_template="false")
    assert lm.render(HISTORY, TOOLS)  # goes on, with a warning


def test_tokenizer_scores_and_replies_agree_with_in_process(qwen_llama_server, qwen):
    from tests.models.test_chat import ASK, TOOLS

    lm = _with_tokenizer(qwen_llama_server)
    served = lm.loglikelihood(TEXTS)
    local = qwen.loglikelihood(TEXTS)
    for a, b in zip(served, local, strict=True):
        assert len(a) == len(b)
    agree = score_agreement(served, local)
    assert agree.max_text_delta <= PER_TEXT_TOL
    assert agree.correlation >= MIN_CORR
    gen = lm.generate(ASK, TOOLS, max_tokens=48)
    assert [(c.name, c.arguments) for c in gen.tool_calls] == [
        ("get_order_details", {"order_id": "#W2378156"})
    ]


def test_a_capability_warning_is_logged_once_per_model(qwen_llama_server, caplog, monkeypatch):
    """Issue 44: "prompts go as text and the server tokenizes them" was printed once per
    request; it is a fact about the model, logged once however many clients score."""
    import logging

    import toolaudit.models._openai as backend

    monkeypatch.setattr(backend, "_TEXT_PROMPT_WARNED", set())
    caplog.set_level(logging.WARNING)
    for _ in range(2):  # two clients of the same model, several requests each
        _with_tokenizer(qwen_llama_server).loglikelihood(TEXTS[:2])
    assert caplog.text.count("does not take token-id prompts") == 1

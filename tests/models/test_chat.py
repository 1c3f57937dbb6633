"""Chat rendering and generation on the real embedded models: Qwen (its own template with
tools and ``<tool_call>``) and Gemma (the plain turn format of ``_gemma``)."""

from __future__ import annotations

import numpy as np
import pytest

from toolaudit.models import CapabilityError, Generation
from toolaudit.models._hf import HFModel
from toolaudit.models._prefix import naive_logprobs

pytestmark = pytest.mark.model

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_order_details",
            "description": "Get the status and details of an order.",
            "parameters": {
                "type": "object",
                "properties": {"order_id": {"type": "string", "description": "e.g. #W0000000"}},
                "required": ["order_id"],
            },
        },
    }
]
SYSTEM = "You are a retail customer-service agent. Use the tools to look up orders."
ASK = [
    {"role": "system", "content": SYSTEM},
    {"role": "user", "content": "Where is my order #W2378156? Please look it up."},
]
HISTORY = [
    *ASK,
    {
        "role": "assistant",
        "content": "",
        "tool_calls": [
            {
                "id": "c1",
                "type": "function",
                "function": {"name": "get_order_details", "arguments": {"order_id": "#W2378156"}},
            }
        ],
    },
    {"role": "tool", "tool_call_id": "c1", "content": '{"status": "delivered"}'},
]


def test_qwen_capabilities_and_template_with_tools(qwen):
    assert qwen.capabilities == frozenset({"loglikelihood", "render", "generate", "tools"})
    text = qwen.render(HISTORY, TOOLS)
    assert text.startswith("<|im_start|>system\n" + SYSTEM)
    assert "# Tools" in text and '"name": "get_order_details"' in text
    assert "<tools>" in text and "<tool_call>" in text
    assert (
        '<tool_call>\n{"name": "get_order_details", "arguments": {"order_id": "#W2378156"}}\n'
        "</tool_call>" in text
    )
    assert '<tool_response>\n{"status": "delivered"}\n</tool_response>' in text
    assert text.endswith("<|im_start|>assistant\n")
    assert not qwen.render(ASK, TOOLS, add_generation_prompt=False).endswith("assistant\n")


@pytest.mark.slow
def test_qwen_loglikelihood_on_a_rendered_chat_matches_full_forward(qwen):
    context = qwen.render(ASK, TOOLS)
    conts = ['{"', "<tool_call>", "I can help", "```"]
    got = qwen.loglikelihood([(context, c) for c in conts])
    ctx = qwen.encode_context(context)
    for c, s in zip(conts, got, strict=True):
        ref = naive_logprobs(qwen.model, ctx, qwen.encode_continuation(c))
        np.testing.assert_allclose(s, ref, atol=1e-4)


def test_qwen_short_chat_scores_equal_full_forward(qwen):
    context = qwen.render([{"role": "user", "content": "Say hi."}])
    got = qwen.loglikelihood([(context, "Hi"), (context, "Hello there")])
    ctx = qwen.encode_context(context)
    assert ctx == qwen.tokenizer(context)["input_ids"]  # Qwen has no <bos> to add
    for c, s in zip(["Hi", "Hello there"], got, strict=True):
        ref = naive_logprobs(qwen.model, ctx, qwen.encode_continuation(c))
        np.testing.assert_allclose(s, ref, atol=1e-4)


@pytest.mark.slow
def test_qwen_greedy_reply_is_a_parsed_tool_call(qwen):
    gen = qwen.generate(ASK, TOOLS, max_tokens=48)
    assert isinstance(gen, Generation)
    assert [(c.name, c.arguments) for c in gen.tool_calls] == [
        ("get_order_details", {"order_id": "#W2378156"})
    ]
    assert gen.finish_reason == "tool_calls" and gen.parse_errors == ()
    assert qwen.generate(ASK, TOOLS, max_tokens=48) == gen


def test_qwen_next_turn_generates_from_the_cached_conversation(qwen):
    # The second turn's prompt begins with the first turn's prompt and reply: only the
    # new tokens run before decoding, and the reply equals an uncached greedy decode.
    import torch

    qwen.clear_cache()
    qwen.generate(ASK, TOOLS, max_tokens=48)
    ran = qwen.scorer.tokens_run
    gen = qwen.generate(HISTORY, TOOLS, max_tokens=24)
    prompt = qwen.render(HISTORY, TOOLS)
    assert qwen.scorer.tokens_run - ran < len(qwen.encode_context(prompt)) // 4
    model, tok = qwen._load()
    ids = qwen.encode_context(prompt)
    with torch.inference_mode():
        out = model.generate(input_ids=torch.tensor([ids]), max_new_tokens=24, do_sample=False)
    plain = tok.decode(out[0, len(ids) :], skip_special_tokens=False)
    for end in ("<|im_end|>", "<|endoftext|>"):
        plain = plain.replace(end, "")
    assert plain == gen.raw


@pytest.mark.slow
def test_qwen_sampling_is_reproducible_for_a_seed(qwen):
    chat = [{"role": "user", "content": "Write one short sentence about shipping."}]
    a = qwen.generate(chat, max_tokens=12, temperature=1.0, seed=7)
    b = qwen.generate(chat, max_tokens=12, temperature=1.0, seed=7)
    others = {qwen.generate(chat, max_tokens=12, temperature=1.0, seed=s).raw for s in (1, 2, 3)}
    assert a == b and a.raw
    assert len(others | {a.raw}) > 1  # different seeds sample differently


def test_gemma_renders_its_plain_turn_format_with_tools(embedded_lm):
    model, tok = embedded_lm
    gemma = HFModel.from_loaded(model, tok, identity="embedded:test")
    text = gemma.render(HISTORY, TOOLS)
    assert text.startswith("<start_of_turn>user\n" + SYSTEM + "\n\n# Tools\n{")
    assert "# Format\nTo call a tool" in text
    assert (
        '<start_of_turn>model\n<tool_call>\n{"name": "get_order_details", "arguments": '
        '{"order_id": "#W2378156"}}\n</tool_call><end_of_turn>\n' in text
    )
    assert text.endswith(
        '<start_of_turn>user\n<tool_response>\n{"status": "delivered"}\n</tool_response>'
        "<end_of_turn>\n<start_of_turn>model\n"
    )
    assert gemma.capabilities == frozenset({"loglikelihood", "render", "generate", "tools"})


def test_render_without_template_is_a_one_line_capability_error(embedded_lm, qwen):
    # Qwen's tokenizer without its template (and not Gemma's vocabulary) cannot render.
    tok = qwen.tokenizer
    saved = tok.chat_template
    try:
        tok.chat_template = None
        bare = HFModel.from_loaded(qwen.model, tok, identity="hf:bare")
        with pytest.raises(CapabilityError) as err:
            bare.render(ASK)
        assert str(err.value).startswith("hf:bare[float32,window=32768,truncate=error]: cannot")
        assert "no chat template" in str(err.value) and "\n" not in str(err.value)
        assert bare.capabilities == frozenset({"loglikelihood"})
    finally:
        tok.chat_template = saved

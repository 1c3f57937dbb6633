"""The transformers backend on the real embedded Gemma 3 270M."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from toolaudit.models._hf import HFModel

REQUESTS = [
    ("The capital of France is", " Paris."),
    ("Hello", " world, how are you today?"),
    ("Refund the order because", " the item arrived damaged."),
    ("A", " B"),
]


def _reference(model, tok, context: str, continuation: str) -> list[float]:
    """Independent computation: one unpadded full forward pass with full logits."""
    ctx = tok(context)["input_ids"]
    cont = tok(continuation, add_special_tokens=False)["input_ids"]
    with torch.inference_mode():
        logits = model(torch.tensor([ctx + cont])).logits[0].float()
    logp = torch.log_softmax(logits, dim=-1)
    return [logp[len(ctx) + j - 1, t].item() for j, t in enumerate(cont)]


@pytest.fixture(scope="module")
def batched_scores(hf_model) -> list[list[float]]:
    return hf_model.loglikelihood(REQUESTS)


def test_hf_loglikelihood_matches_full_forward_pass(batched_scores, embedded_lm):
    model, tok = embedded_lm
    got = batched_scores
    for (context, continuation), scores in zip(REQUESTS, got, strict=True):
        ref = _reference(model, tok, context, continuation)
        assert len(scores) == len(tok(continuation, add_special_tokens=False)["input_ids"])
        np.testing.assert_allclose(scores, ref, atol=1e-4)


def test_hf_loglikelihood_batched_equals_unbatched(hf_model, batched_scores):
    batched = batched_scores
    single = [hf_model.loglikelihood([r])[0] for r in REQUESTS]
    for b, s in zip(batched, single, strict=True):
        np.testing.assert_allclose(b, s, atol=1e-4)
    assert all(v < 0 for row in batched for v in row)


def test_hf_loglikelihood_shared_context_equals_full_forward_pass(hf_model, embedded_lm):
    # Answer options after one prompt: the context runs once and the options are scored
    # on copies of its cache; each must equal its own full forward pass.
    model, tok = embedded_lm
    context = "Rate the match from 1 to 10. <answer>"
    options = [str(k) for k in range(1, 11)] + [" ten out of ten"]
    got = hf_model.loglikelihood([(context, o) for o in options])
    for option, scores in zip(options, got, strict=True):
        np.testing.assert_allclose(scores, _reference(model, tok, context, option), atol=1e-4)


def test_hf_loglikelihood_prefers_the_plausible_continuation(hf_model):
    good, bad = hf_model.loglikelihood(
        [("The capital of France is", " Paris"), ("The capital of France is", " banana")]
    )
    assert sum(good) > sum(bad) + 3.0


PROMPTS = ["The capital of France is", "Once upon a time"]


@pytest.fixture(scope="module")
def batched_generation(hf_model) -> list[str]:
    return hf_model.generate(PROMPTS, max_tokens=5)


def test_hf_generate_is_deterministic_and_batch_independent(hf_model, batched_generation):
    # Left-padded batch == each prompt alone == a second identical call.
    alone = [hf_model.generate([p], max_tokens=5)[0] for p in PROMPTS]
    assert batched_generation == alone
    assert hf_model.generate(PROMPTS[:1], max_tokens=5) == alone[:1]
    assert all(len(t.strip()) > 0 for t in alone)


def test_hf_generate_cuts_at_stop_string(hf_model, batched_generation):
    full = batched_generation[1]
    word = full.split()[1]
    cut = hf_model.generate(PROMPTS[1:], max_tokens=5, stop=[word])[0]
    assert cut == full[: full.index(word)]


def test_hf_chat_mode_renders_gemma_turns_and_changes_identity(embedded_lm):
    model, tok = embedded_lm
    chat = HFModel.from_loaded(model, tok, identity="embedded:test", chat=True)
    assert chat.identity == "embedded:test:chat"
    assert chat.render("hi") == "<start_of_turn>user\nhi<end_of_turn>\n<start_of_turn>model\n"
    plain = HFModel.from_loaded(model, tok, identity="embedded:test")
    (a,), (b,) = chat.loglikelihood([("hi", " Hello")]), plain.loglikelihood([("hi", " Hello")])
    assert a != pytest.approx(b, abs=1e-3)


def test_hf_identity_of_embedded_names_converted_folder():
    lm = HFModel(None)
    assert lm.identity.startswith("embedded:gemma3-270m-")

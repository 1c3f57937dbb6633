"""The transformers backend on the real embedded Gemma 3 270M (scoring, completion)."""

from __future__ import annotations

import numpy as np
import pytest

from toolaudit.errors import ConfigError
from toolaudit.models import ContextLengthError, load_model
from toolaudit.models._hf import HFModel
from toolaudit.models._prefix import naive_logprobs

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
    return naive_logprobs(model, ctx, cont)


@pytest.fixture(scope="module")
def batched_scores(hf_model) -> list[list[float]]:
    return hf_model.loglikelihood(REQUESTS)


def test_hf_loglikelihood_matches_full_forward_pass(batched_scores, embedded_lm):
    model, tok = embedded_lm
    for (context, continuation), scores in zip(REQUESTS, batched_scores, strict=True):
        ref = _reference(model, tok, context, continuation)
        assert len(scores) == len(tok(continuation, add_special_tokens=False)["input_ids"])
        np.testing.assert_allclose(scores, ref, atol=1e-4)


def test_hf_loglikelihood_batched_equals_unbatched(hf_model, batched_scores):
    single = [hf_model.loglikelihood([r])[0] for r in REQUESTS]
    for b, s in zip(batched_scores, single, strict=True):
        np.testing.assert_allclose(b, s, atol=1e-4)
    assert all(v < 0 for row in batched_scores for v in row)


def test_hf_loglikelihood_shared_context_equals_full_forward_pass(hf_model, embedded_lm):
    # Answer options after one prompt: the context runs once and the options are scored
    # on copies of its cache; each must equal its own full forward pass.
    model, tok = embedded_lm
    context = "Rate the match from 1 to 10. <answer>"
    options = [str(k) for k in range(1, 11)] + [" ten out of ten"]
    got = hf_model.loglikelihood([(context, o) for o in options])
    for option, scores in zip(options, got, strict=True):
        np.testing.assert_allclose(scores, _reference(model, tok, context, option), atol=1e-4)


@pytest.mark.slow
def test_hf_prefix_reuse_across_calls_past_the_sliding_window(embedded_lm):
    # Gemma 3 mixes sliding-window (512) and global layers: a stored 700-token context
    # extended by later calls must still give the full forward pass's numbers.
    model, tok = embedded_lm
    lm = HFModel.from_loaded(model, tok, identity="embedded:test", batch_size=4)
    base = " ".join(f"Order {i} shipped to customer {i * 7}." for i in range(70))
    first = lm.loglikelihood([(base, " Next order")])[0]
    run_after_first = lm.scorer.tokens_run
    longer = base + " Order 70 shipped to customer 490."
    second = lm.loglikelihood([(longer, " The end."), (longer, " Order 71")])
    assert lm.scorer.tokens_run - run_after_first < 40  # only the new tokens ran
    assert len(tok(base)["input_ids"]) > 600
    np.testing.assert_allclose(first, _reference(model, tok, base, " Next order"), atol=2e-4)
    for cont, got in zip((" The end.", " Order 71"), second, strict=True):
        np.testing.assert_allclose(got, _reference(model, tok, longer, cont), atol=2e-4)


def test_hf_shared_prefix_within_one_call_runs_once(embedded_lm):
    model, tok = embedded_lm
    lm = HFModel.from_loaded(model, tok, identity="embedded:test")
    head = "The refund policy says: " + "items may be returned within thirty days. " * 8
    reqs = [(head + tail, " Yes") for tail in ("Is it allowed?", "Can I return it?", "OK?")]
    got = lm.loglikelihood(reqs)
    n_head = len(tok(head)["input_ids"])
    assert lm.scorer.tokens_run < n_head + 3 * 12
    for (c, k), s in zip(reqs, got, strict=True):
        np.testing.assert_allclose(s, _reference(model, tok, c, k), atol=1e-4)


def test_hf_repeated_request_in_one_batch_is_scored_once(embedded_lm):
    model, tok = embedded_lm
    lm = HFModel.from_loaded(model, tok, identity="embedded:test")
    reqs = [("Refund the order because", " the item arrived damaged.")] * 3
    reqs.append(("Refund the order because", " it was late."))
    got = lm.loglikelihood(reqs)
    ran = lm.scorer.tokens_run
    fresh = HFModel.from_loaded(model, tok, identity="embedded:test")
    fresh.loglikelihood([reqs[0], reqs[3]])
    assert ran == fresh.scorer.tokens_run
    assert got[0] == got[1] == got[2]
    for (c, k), s in zip(reqs[2:], got[2:], strict=True):
        np.testing.assert_allclose(s, _reference(model, tok, c, k), atol=1e-4)


def test_hf_next_turn_starts_from_the_scored_continuation(embedded_lm):
    # A single continuation's state is kept: the next turn (context + continuation +
    # more) runs only its new tokens, and a context that leaves a stored one mid-way
    # reuses the shared part (a cropped cache); both equal their full forward passes.
    model, tok = embedded_lm
    lm = HFModel.from_loaded(model, tok, identity="embedded:test")
    head = ("Tool schema: lookup(order_id). Conversation so far. " * 6).rstrip()
    reply = ' {"order_id": "#W123", "status": "delivered"}'
    lm.loglikelihood([(head, reply)])
    before = lm.scorer.tokens_run
    nxt = head + reply + " The user asks again."
    (got,) = lm.loglikelihood([(nxt, " Yes")])
    assert lm.scorer.tokens_run - before < 12
    np.testing.assert_allclose(got, _reference(model, tok, nxt, " Yes"), atol=1e-4)
    before = lm.scorer.tokens_run
    other = head + ' {"order_id": "#W999"} Something else.'
    (got,) = lm.loglikelihood([(other, " No")])
    assert lm.scorer.tokens_run - before < 20
    np.testing.assert_allclose(got, _reference(model, tok, other, " No"), atol=1e-4)


def test_hf_loglikelihood_prefers_the_plausible_continuation(hf_model):
    good, bad = hf_model.loglikelihood(
        [("The capital of France is", " Paris"), ("The capital of France is", " banana")]
    )
    assert sum(good) > sum(bad) + 3.0


LONG = " ".join(f"word{i}" for i in range(12))  # about 25 tokens: over a 16-token window


def test_hf_over_window_context_errors_by_default(embedded_lm):
    model, tok = embedded_lm
    lm = HFModel.from_loaded(model, tok, identity="embedded:test", max_length=16)
    assert lm.identity == "embedded:test[float32,window=16,truncate=error]"
    long = LONG
    with pytest.raises(ContextLengthError, match=r"embedded:test\[float32,window=16"):
        lm.loglikelihood([(long, " fifteen")])
    with pytest.raises(ContextLengthError, match="--truncate left|middle"):
        lm.complete([long], max_tokens=4)


@pytest.mark.parametrize("mode", ["left", "middle"])
def test_hf_truncation_is_opt_in_counted_and_in_identity(embedded_lm, mode):
    model, tok = embedded_lm
    lm = HFModel.from_loaded(model, tok, identity="embedded:test", max_length=16, truncate=mode)
    assert lm.identity == f"embedded:test[float32,window=16,truncate={mode}]"
    long = LONG
    ids = tok(long)["input_ids"]
    cont = tok(" fifteen", add_special_tokens=False)["input_ids"]
    (got,) = lm.loglikelihood([(long, " fifteen")])
    kept = ids[:1] + (ids[len(ids) - (15 - len(cont)) :] if mode == "left" else [])
    if mode == "middle":
        room = 16 - len(cont) - 1
        kept = ids[:1] + ids[1 : 1 + room // 2] + ids[len(ids) - (room - room // 2) :]
    assert len(kept) + len(cont) == 16
    np.testing.assert_allclose(got, naive_logprobs(model, kept, cont), atol=1e-4)
    assert lm.truncations.as_dict() == {"contexts": 1, "tokens": len(ids) - len(kept)}


PROMPTS = ["The capital of France is", "Once upon a time"]


@pytest.fixture(scope="module")
def batched_completion(hf_model) -> list[str]:
    return hf_model.complete(PROMPTS, max_tokens=5)


def test_hf_complete_is_deterministic_and_batch_independent(hf_model, batched_completion):
    alone = [hf_model.complete([p], max_tokens=5)[0] for p in PROMPTS]
    assert batched_completion == alone
    assert hf_model.complete(PROMPTS[:1], max_tokens=5) == alone[:1]
    assert all(len(t.strip()) > 0 for t in alone)


def test_hf_complete_cuts_at_stop_string(hf_model, batched_completion):
    full = batched_completion[1]
    word = full.split()[1]
    cut = hf_model.complete(PROMPTS[1:], max_tokens=5, stop=[word])[0]
    assert cut == full[: full.index(word)]


def test_hf_renders_gemma_turns_and_has_no_chat_prompt_mode(embedded_lm):
    """A user turn in Gemma's plain turn format; wrapping raw prompts as a chat turn is
    the caller's (``redact --chat``), not a model option that changes its identity."""
    model, tok = embedded_lm
    lm = HFModel.from_loaded(model, tok, identity="embedded:test")
    assert lm.identity == "embedded:test[float32,window=32768,truncate=error]"
    turn = lm.render([{"role": "user", "content": "hi"}])
    assert turn == "<start_of_turn>user\nhi<end_of_turn>\n<start_of_turn>model\n"
    with pytest.raises(ConfigError, match="invalid embedded option='chat'"):
        load_model("embedded:gemma", chat=True)


def test_hf_identity_of_embedded_names_converted_folder_and_options():
    assert HFModel("embedded:gemma", device="cpu").identity.startswith("embedded:gemma3-270m-")
    qwen = HFModel(None, device="cpu").identity
    assert qwen == (
        "embedded:qwen2.5-coder-0.5b-instruct-1d9614638d18024d[float32,window=32768,truncate=error]"
    )
    assert HFModel("embedded:qwen", device="cpu", truncate="left").identity != qwen


TREE_CONTS = [
    ' {"name": "get_order_details',
    ' {"name": "get_user_details',
    ' {"name": "cancel_pending_order',
    ' {"',
    " Sure, let me check.",
]


def test_hf_continuations_as_one_token_tree_past_the_sliding_window(embedded_lm):
    # Continuations sharing a token prefix run it once (a trie in one forward pass with a
    # tree mask); after a context longer than Gemma's 512-token sliding window every
    # score still equals its own full forward pass, and so does the batch path.
    model, tok = embedded_lm
    ctx = "Order record: " + '{"order_id": "#W1", "status": "pending"} ' * 40
    assert len(tok(ctx)["input_ids"]) > model.config.sliding_window
    lm = HFModel.from_loaded(model, tok, identity="embedded:test")
    got = lm.loglikelihood([(ctx, c) for c in TREE_CONTS])
    n_ctx = len(tok(ctx)["input_ids"])
    n_conts = sum(len(tok(c, add_special_tokens=False)["input_ids"]) for c in TREE_CONTS)
    assert lm.scorer.tokens_run - n_ctx < n_conts - 8  # the shared ' {"name": "' ran once
    for c, s in zip(TREE_CONTS, got, strict=True):
        np.testing.assert_allclose(s, _reference(model, tok, ctx, c), atol=1e-4)
    batch = HFModel.from_loaded(model, tok, identity="embedded:test")
    batch.scorer._tree_ok = lambda: False  # type: ignore[method-assign]
    np.testing.assert_allclose(
        [x for s in batch.loglikelihood([(ctx, c) for c in TREE_CONTS]) for x in s],
        [x for s in got for x in s],
        atol=1e-4,
    )


def test_hf_a_scored_continuation_that_a_later_context_extends_is_run_once(embedded_lm):
    # Two returns scored on one context, and the next turn after the first one, in one
    # batch: the first return's state is kept, so the next turn runs only its new tokens.
    model, tok = embedded_lm
    lm = HFModel.from_loaded(model, tok, identity="embedded:test")
    head = ("Tool schema: lookup(order_id). " * 4).rstrip()
    a, b = ' {"status": "delivered", "items": 3}', ' {"status": "pending", "items": 1}'
    nxt = head + a + " Assistant:"
    got = lm.loglikelihood([(head, a), (head, b), (nxt, " Done")])
    n = len(tok(nxt + " Done")["input_ids"]) + len(tok(b, add_special_tokens=False)["input_ids"])
    assert lm.scorer.tokens_run <= n
    for (c, k), s in zip([(head, a), (head, b), (nxt, " Done")], got, strict=True):
        np.testing.assert_allclose(s, _reference(model, tok, c, k), atol=1e-4)


def _distinct_prefixes(tok, requests) -> int:
    """Positions a scorer must run: distinct prefixes of each context + continuation
    but its last token (the independent count the faults benchmark uses)."""
    seen = set()
    for c, k in requests:
        ids = tok(c)["input_ids"] + tok(k, add_special_tokens=False)["input_ids"]
        seen.update(tuple(ids[:n]) for n in range(1, len(ids)))
    return len(seen)


FAULTS_LIKE = [
    # two "arms" after one shared head, a decision context after each return, and
    # candidates at each decision; the second arm's return is a prefix of the first's
    ("Policy and tools. User: where is my order? Call: get_order. Return:", ' {"id": 1}'),
    ("Policy and tools. User: where is my order? Call: get_order. Return:", ' {"id"'),
    ('Policy and tools. User: where is my order? Call: get_order. Return: {"id": 1} Next:', " get"),
    (
        'Policy and tools. User: where is my order? Call: get_order. Return: {"id": 1} Next:',
        " reply",
    ),
    ('Policy and tools. User: where is my order? Call: get_order. Return: {"id" Next:', " get"),
    ("Schema of get_order alone. Return:", ' {"id": 1}'),
]


@pytest.mark.parametrize("tree_limit", [4096, 0])
def test_hf_one_call_is_one_trie_each_prefix_runs_once(embedded_lm, tree_limit):
    # Every distinct token prefix runs exactly once, whatever the order of the requests,
    # with tree passes (the default) or stems only (models the tree mask cannot serve);
    # every score equals its own full forward pass.
    model, tok = embedded_lm
    lm = HFModel.from_loaded(model, tok, identity="embedded:test")
    lm.scorer.tree_limit = tree_limit
    got = lm.loglikelihood(FAULTS_LIKE[::-1])[::-1]
    assert lm.scorer.tokens_run == _distinct_prefixes(tok, FAULTS_LIKE)
    if tree_limit:
        assert lm.scorer.calls <= 4
    for (c, k), s in zip(FAULTS_LIKE, got, strict=True):
        np.testing.assert_allclose(s, _reference(model, tok, c, k), atol=1e-4)


def test_hf_a_stored_head_is_not_run_again_by_the_next_call(embedded_lm):
    # The next task shares only the head (policy and tools) with the previous one: the
    # stored stem is cut to the shared part, which does not run again.
    model, tok = embedded_lm
    lm = HFModel.from_loaded(model, tok, identity="embedded:test")
    head = "Policy and tools. " * 20
    lm.loglikelihood([(head + "User one asks about an order.", " Yes"), (head + "x", " No")])
    before = lm.scorer.tokens_run
    req = (head + "User two asks about a refund.", " Sure")
    (got,) = lm.loglikelihood([req])
    n_head = len(tok(head)["input_ids"])
    assert lm.scorer.tokens_run - before <= _distinct_prefixes(tok, [req]) - n_head + 2
    np.testing.assert_allclose(got, _reference(model, tok, *req), atol=1e-4)


def test_a_model_with_broken_weights_or_tokenizer_is_refused_at_load(tiny_lm) -> None:
    """Weights that give NaN (50 MB of 0xFF in a safetensors file reads as NaN) and a
    tokenizer that turns text into no tokens are refused when the model loads, in one
    line naming the model and the rebuild command, instead of scoring NaN or 0 tokens."""
    import copy

    import torch

    from toolaudit.errors import ModelError
    from toolaudit.models._hf import _check_loaded

    model, tok = tiny_lm.model, tiny_lm.tokenizer
    _check_loaded(model, tok, "test:tiny")  # intact: nothing raised
    broken = copy.deepcopy(model)
    with torch.no_grad():
        next(broken.parameters()).fill_(float("nan"))
    with pytest.raises(ModelError, match=r"test:tiny: its weights give non-finite logits.*--force"):
        _check_loaded(broken, tok, "test:tiny")

    def no_tokens(text, add_special_tokens=False):
        return {"input_ids": []}

    with pytest.raises(ModelError, match="its tokenizer turns text into no tokens"):
        _check_loaded(model, no_tokens, "test:tiny")


def test_an_hf_folder_identity_hashes_the_weights_bytes(tiny_lm, tmp_path) -> None:
    """Two folders whose weight files have the same names and sizes but different bytes
    (one corrupted in place) get different identities, so no cache entry or result record
    of the intact model is reused for the corrupted one; an unchanged copy keeps its id."""
    import shutil

    folder = tmp_path / "tiny"
    tiny_lm.model.save_pretrained(folder)
    tiny_lm.tokenizer.save_pretrained(folder)
    copy = tmp_path / "copy"
    shutil.copytree(folder, copy)
    intact = HFModel(str(folder)).identity
    assert HFModel(str(copy)).identity.split("@")[1] == intact.split("@")[1]
    weights = copy / "model.safetensors"
    size = weights.stat().st_size
    with weights.open("r+b") as fh:  # same name, same size, other bytes
        fh.seek(size // 2)
        fh.write(b"\xff" * 64)
    assert weights.stat().st_size == size
    assert HFModel(str(copy)).identity.split("@")[1] != intact.split("@")[1]

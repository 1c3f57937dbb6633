"""llama.cpp in process (``llama:gemma``) on the real embedded Gemma GGUF: the same
tokens and chat text as transformers, log-probabilities close to float32, generation
reproducible and going on from the cached prefix."""

from __future__ import annotations

import numpy as np
import pytest

from toolaudit.errors import ConfigError, ModelError
from toolaudit.models import load_model

pytest.importorskip("llama_cpp")

REQUESTS = [
    ("The capital of France is", " Paris."),
    ("The capital of France is", " Lyon, a city."),
    ("Order record: " + '{"order_id": "#W1", "status": "pending"} ' * 30, ' {"name": "get'),
]


@pytest.fixture(scope="module")
def llama():
    return load_model("llama:gemma")


def test_llama_scores_close_to_transformers_float32(llama, hf_model):
    # Gemma's Q4_K_M weights with llama.cpp's 8-bit activations and 16-bit cache are not
    # the de-quantized float32 model: unlikely tokens (-19 nats) move by up to 1.2 nats,
    # the mean over these tokens stays near 0.15 (Qwen's GGUF: benchmarks/engine_speed.py)
    got = llama.loglikelihood(REQUESTS)
    ref = hf_model.loglikelihood(REQUESTS)
    assert [len(a) for a in got] == [len(b) for b in ref]
    diff = np.abs(np.concatenate(got) - np.concatenate(ref))
    assert float(np.mean(diff)) < 0.25
    # the same batch again, in another order, from the cache: the same numbers
    again = llama.loglikelihood(REQUESTS[::-1])[::-1]
    for a, b in zip(got, again, strict=True):
        np.testing.assert_allclose(a, b, atol=1e-5)


def test_llama_generation_is_reproducible_from_a_cleared_cache(llama):
    # A run that starts from a cleared cache is exact (the probe agent clears it at the
    # start of every run); a prompt read from the cache is computed in other batches,
    # which may move a sampled token, so reruns must clear it.
    chat = [{"role": "user", "content": "List three colours."}]
    llama.clear_cache()
    first = llama.generate(chat, max_tokens=12, temperature=0.8, seed=3)
    llama.clear_cache()
    second = llama.generate(chat, max_tokens=12, temperature=0.8, seed=3)
    assert first == second and first.raw
    llama.clear_cache()
    greedy = llama.generate(chat, max_tokens=12)
    llama.clear_cache()
    assert greedy == llama.generate(chat, max_tokens=12)
    assert greedy.finish_reason in ("stop", "length")


def test_llama_identity_names_the_gguf_and_differs_from_float32(llama):
    ident = llama.identity
    assert ident.startswith("llama:gemma-3-270m") and "[gguf," in ident
    assert ident != load_model("embedded:gemma").identity


def test_llama_identity_of_a_gguf_file_hashes_every_byte(tmp_path):
    """A user's GGUF is named by the SHA-256 of the whole file: one byte changed in the
    middle (same size, same ends) is another identity."""
    import hashlib
    import shutil

    from toolaudit.models import embedded_gguf_path

    copy = tmp_path / "m.gguf"
    shutil.copy(embedded_gguf_path("gemma"), copy)
    spec = f"llama:{copy},max_length=2048"  # a window given: the GGUF's metadata is not read
    first = load_model(spec).identity
    digest = hashlib.sha256(copy.read_bytes()).hexdigest()[:16]
    assert first == f"llama:m-{digest}[gguf,window=2048,truncate=error]"
    with copy.open("r+b") as fh:
        fh.seek(copy.stat().st_size // 2)
        byte = fh.read(1)
        fh.seek(-1, 1)
        fh.write(bytes([byte[0] ^ 0xFF]))
    assert load_model(spec).identity != first


def test_llama_bad_specs_fail_in_one_line(tmp_path):
    with pytest.raises(ModelError, match="no such GGUF"):
        _ = load_model(f"llama:{tmp_path / 'none.gguf'}").identity
    with pytest.raises(ConfigError, match="threads"):
        load_model("llama:gemma", threads=0)
    with pytest.raises(ModelError, match="needs qwen, gemma"):
        load_model("llama:")

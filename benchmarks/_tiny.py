"""The model behind the benchmarks' ``--smoke`` runs: the embedded Qwen's own tokenizer
and chat template in front of a one-layer Qwen2 (hidden size 16) with seeded random
weights, built in memory in about a second.

A smoke run checks that a benchmark still runs through toolaudit's current code and
prints the figures it documents; the real weights would only make it slower (minutes
per script on 2 cores). The texts, their rendering and tokenization, the scheduling and
both sides of every comparison are the real ones, so an exactness figure (two paths on
the same model) still means something; the timings and the model's readings do not.
"""

from __future__ import annotations

from typing import Any

SMOKE_IDENTITY = "smoke:tiny-qwen2-seed0"


def tiny_qwen(cls: Any = None, *, seed: int = 0, **options: Any) -> Any:
    """A tiny seeded Qwen2 behind ``cls`` (default ``HFModel``; ``OldHFModel`` also
    works), with the embedded Qwen's tokenizer; ``options`` go to ``from_loaded``."""
    import torch
    from transformers import AutoTokenizer, Qwen2Config, Qwen2ForCausalLM

    from toolaudit.models import embedded_model_dir
    from toolaudit.models._hf import HFModel

    folder = embedded_model_dir("qwen")
    real = Qwen2Config.from_pretrained(str(folder))
    shape = {"hidden_size": 16, "intermediate_size": 32, "num_hidden_layers": 1,
             "num_attention_heads": 2, "num_key_value_heads": 1}  # fmt: skip
    config = Qwen2Config(
        vocab_size=real.vocab_size,
        max_position_embeddings=real.max_position_embeddings,
        bos_token_id=real.bos_token_id,
        eos_token_id=real.eos_token_id,
        tie_word_embeddings=True,
        **shape,
    )
    torch.manual_seed(seed)
    model = Qwen2ForCausalLM(config).eval()
    tok = AutoTokenizer.from_pretrained(str(folder))
    return (cls or HFModel).from_loaded(model, tok, identity=SMOKE_IDENTITY, **options)

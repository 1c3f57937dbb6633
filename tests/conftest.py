"""Shared fixtures: the real public data beside the checkout, and the embedded model."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def _shared_data() -> Path:
    env = os.environ.get("TAU2_DATA_DIR")
    return Path(env) if env else (REPO.parent / "shared" / "data").resolve()


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--runslow", action="store_true", help="also run tests marked slow")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if config.getoption("--runslow"):
        return
    skip = pytest.mark.skip(reason="slow: run with --runslow")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """The folder laid out like tau2-bench's data/ (../shared/data); tests need it."""
    root = _shared_data()
    if not (root / "tau2").is_dir():
        pytest.fail(f"shared data not found at {root}; set TAU2_DATA_DIR")
    return root


@pytest.fixture(scope="session")
def embedded_lm():
    """The real embedded Gemma 3 270M as (model, tokenizer), loaded once per session."""
    from toolaudit.models._embedded import load_causal_lm

    return load_causal_lm("embedded:gemma", device="cpu")


@pytest.fixture(scope="session")
def tiny_lm():
    """A small deterministic model behind the LanguageModel contract, for the fast tests
    of model-facing logic (resume, report, claims): a one-layer Qwen2 of hidden size 16
    with seeded random weights, built in memory, and the embedded Qwen's real tokenizer
    and chat template. Its log-probabilities mean nothing; the real-model tests (slow)
    stay the oracle for what the numbers say."""
    torch = pytest.importorskip("torch")
    from transformers import AutoTokenizer, Qwen2Config, Qwen2ForCausalLM

    from toolaudit.models import embedded_model_dir
    from toolaudit.models._hf import HFModel

    folder = str(embedded_model_dir("qwen"))
    tok = AutoTokenizer.from_pretrained(folder)
    real = Qwen2Config.from_pretrained(folder)
    torch.manual_seed(0)
    config = Qwen2Config(
        vocab_size=real.vocab_size, hidden_size=16, intermediate_size=32, num_hidden_layers=1,
        num_attention_heads=2, num_key_value_heads=1, tie_word_embeddings=True,
        max_position_embeddings=real.max_position_embeddings,
        bos_token_id=real.bos_token_id, eos_token_id=real.eos_token_id,
    )  # fmt: skip
    model = Qwen2ForCausalLM(config).eval()
    return HFModel.from_loaded(model, tok, identity="test:tiny-qwen2-seed0")

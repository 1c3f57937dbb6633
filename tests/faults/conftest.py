"""The faults audit's model: the real embedded Qwen instruct model, loaded once."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def qwen_lm():
    """``embedded:qwen`` through the model layer (the audit's default model)."""
    from toolaudit.models import load_model

    return load_model("embedded:qwen", device="cpu")

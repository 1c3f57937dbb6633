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
    from toolaudit.models import load_causal_lm

    return load_causal_lm("embedded:gemma", device="cpu")

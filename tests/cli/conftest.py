"""Fixtures shared by the CLI tests: a small controlled benchmark and its frozen model,
built once per session (training the model is the slow part)."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def frozen_tcr(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder with ``examples.jsonl`` (tcr-shortcut, scale 0.01, seed 2) and the
    controlled frozen model trained on it, ``frozen.joblib``."""
    from toolaudit.datasets import make_tcr_shortcut
    from toolaudit.models import save_pipeline, train_controlled_model
    from toolaudit.traces import write_jsonl

    d = tmp_path_factory.mktemp("tcr")
    examples = make_tcr_shortcut(scale=0.01, seed=2)
    write_jsonl(d / "examples.jsonl", examples)
    save_pipeline(train_controlled_model(examples, seed=2), d / "frozen.joblib")
    return d

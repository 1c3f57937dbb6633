"""Fixtures for the model backends: the real embedded Gemma and Qwen behind HFModel, and a
real llama.cpp server (llama-cpp-python) serving the same GGUF file."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

LLAMA_KEY_ENV = "TOOLAUDIT_TEST_LLAMA_KEY"
LLAMA_KEY = "sk-test-6f1c2a9e-never-in-caches"
LLAMA_ALIAS = "gemma3-270m"
QWEN_ALIAS = "qwen2.5-coder-0.5b-instruct"
READY_TIMEOUT_S = 180.0


@pytest.fixture(scope="session")
def qwen():
    """The real embedded Qwen2.5-Coder-0.5B-Instruct behind HFModel, on CPU."""
    from toolaudit.models._hf import HFModel

    lm = HFModel("embedded:qwen", device="cpu", batch_size=8)
    _ = lm.model  # load once for the session
    return lm


@pytest.fixture(scope="session")
def hf_model(embedded_lm):
    """HFModel around the session's embedded (model, tokenizer)."""
    from toolaudit.models._hf import HFModel

    model, tok = embedded_lm
    return HFModel.from_loaded(model, tok, identity="embedded:test", batch_size=4)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _ready(url: str) -> bool:
    req = urllib.request.Request(url, headers={"Authorization": f"Bearer {LLAMA_KEY}"})
    try:
        with urllib.request.urlopen(req, timeout=2) as resp:
            return resp.status == 200
    except OSError:
        return False


def _serve(
    gguf: Path, alias: str, chat_format: str | None, log: Path, n_ctx: int = 2048
) -> Iterator[str]:
    """Run ``python -m llama_cpp.server`` on ``gguf`` on a free port; yield its /v1 URL.

    ``chat_format`` None uses the GGUF's own chat template (which renders ``tools``;
    llama-cpp-python's named formats such as ``chatml`` drop them)."""
    try:
        import llama_cpp.server  # noqa: F401
    except ImportError as exc:
        pytest.fail(f"llama-cpp-python[server] is not installed ({exc}); see .ci/run")
    port = _free_port()
    cmd = [
        sys.executable, "-m", "llama_cpp.server",
        "--model", str(gguf),
        "--model_alias", alias,
        "--host", "127.0.0.1", "--port", str(port),
        "--n_ctx", str(n_ctx), "--n_threads", "2", "--n_threads_batch", "2",
        "--logits_all", "true",
        "--api_key", LLAMA_KEY,
    ]  # fmt: skip
    if chat_format:
        cmd += ["--chat_format", chat_format]
    with log.open("wb") as fh:
        proc = subprocess.Popen(cmd, stdout=fh, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}/v1"
    os.environ[LLAMA_KEY_ENV] = LLAMA_KEY
    try:
        deadline = time.monotonic() + READY_TIMEOUT_S
        while not _ready(base + "/models"):
            if proc.poll() is not None:
                pytest.fail(f"llama server exited ({proc.returncode}):\n{_tail(log)}")
            if time.monotonic() > deadline:
                pytest.fail(f"llama server not ready in {READY_TIMEOUT_S:.0f}s:\n{_tail(log)}")
            time.sleep(0.5)
        yield base
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@pytest.fixture(scope="session")
def llama_server(tmp_path_factory) -> Iterator[str]:
    """A real llama.cpp server (llama-cpp-python) on the embedded Gemma GGUF.

    The server requires an API key, which the tests pass through the environment
    variable ``TOOLAUDIT_TEST_LLAMA_KEY``. Missing llama-cpp-python is a failure, not a
    skip: .ci/run installs it.
    """
    from toolaudit.models import embedded_gguf_path

    log = tmp_path_factory.mktemp("llama") / "server.log"
    yield from _serve(embedded_gguf_path("gemma"), LLAMA_ALIAS, "gemma", log)


@pytest.fixture(scope="session")
def qwen_llama_server(tmp_path_factory) -> Iterator[str]:
    """A real llama.cpp server on the embedded Qwen GGUF (assembled from its parts), with
    the GGUF's own chat template (tools section and ``<tool_call>`` format)."""
    from toolaudit.models import embedded_gguf_path

    log = tmp_path_factory.mktemp("llama-qwen") / "server.log"
    # 4,096 tokens: an LLM-agent episode of the probe study fits (its prompts grow by turn)
    yield from _serve(embedded_gguf_path("qwen"), QWEN_ALIAS, None, log, n_ctx=4096)


def _tail(path: Path) -> str:
    return path.read_text(errors="replace")[-2000:]

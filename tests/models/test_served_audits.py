"""The model-facing audits run against a real llama.cpp server (llama-cpp-python) on the
embedded Qwen, as a user with a served model runs them: ``probe run`` with the LLM agent,
and ``redact`` on a small controlled benchmark, and (slow) ``faults run`` on one task,
compared with the in-process llama.cpp backend on the same GGUF (``llama:qwen``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.models.conftest import LLAMA_KEY_ENV, QWEN_ALIAS
from toolaudit.cli.main import main

pytestmark = [pytest.mark.llama, pytest.mark.model]


def _served(url: str) -> str:
    return f"openai:{QWEN_ALIAS}@{url},tokenizer=embedded:qwen,timeout=600,concurrency=1"


def test_probe_llm_agent_runs_against_the_server(qwen_llama_server, tmp_path):
    out = tmp_path / "probe"
    spec = _served(qwen_llama_server) + f",api_key_env={LLAMA_KEY_ENV}"
    rc = main(
        ["-q", "probe", "run", "--suite", "researchops", "--policies", "llm", "--model", spec,
         "--tasks", "1", "--seeds", "1", "--out", str(out)]
    )  # fmt: skip
    assert rc == 0
    records = [json.loads(line) for line in (out / "records.jsonl").read_text().splitlines()]
    assert len(records) == 7  # one task under the seven conditions
    generations = sum(r["source"]["agent_info"]["generations"] for r in records)
    assert generations >= 7
    models = {r["source"]["agent_info"]["model"] for r in records}
    assert [m.startswith(f"openai:{QWEN_ALIAS}@{qwen_llama_server}[tokens=") for m in models] == [
        True
    ]


def _scores(folder: Path) -> dict[tuple[str, str], float]:
    out = {}
    for line in (folder / "scores.jsonl").read_text().splitlines():
        row = json.loads(line)
        for variant, value in row["scores"].items():
            out[(row["id"], variant)] = value
    return out


def test_redaction_against_the_server_matches_in_process(qwen_llama_server, tmp_path):
    data = tmp_path / "tcr"
    assert (
        main(["-q", "datasets", "make", "tcr-shortcut", "--out", str(data), "--scale", "0.01"]) == 0
    )
    # Two rows, pdb_id only, yes/no scoring: 8 requests, since the llama.cpp server
    # echoes a whole prompt per request (8 to 12 s each on 2 cores; options scoring of
    # 4 rows x 4 variants is 160 requests, half an hour).
    common = ["--limit", "2", "--class", "pdb_id", "--scoring", "yesno", "--keep-tools",
              "thermompnn_ddg", "--max-tool-lines", "4", "--n-boot", "200"]  # fmt: skip
    spec = _served(qwen_llama_server) + f",api_key_env={LLAMA_KEY_ENV}"
    assert (
        main(
            ["-q", "redact", str(data), "--out", str(tmp_path / "served"), "--model", spec, *common]
        )
        == 0
    )
    assert (
        main(
            [
                "-q",
                "redact",
                str(data),
                "--out",
                str(tmp_path / "local"),
                "--model",
                "llama:qwen",
                *common,
            ]
        )
        == 0
    )
    served, local = _scores(tmp_path / "served"), _scores(tmp_path / "local")
    assert served.keys() == local.keys() and len(served) == 4  # 2 rows x 2 variants
    # A score is P(yes) normalised against P(no) from the two answers' log-probabilities:
    # the same GGUF through the server and in process.
    assert max(abs(served[k] - local[k]) for k in served) <= 0.02


def _faults_rows(folder: Path) -> dict[tuple[str, str, int], dict]:
    rows = {}
    for line in (folder / "rows.jsonl").read_text().splitlines():
        for r in json.loads(line)["rows"]:
            rows[(r["task"], r["arm"], r["k"])] = r
    return rows


@pytest.mark.slow  # 1,407 streamed forced completions: 7 min 25 s in all (docs/models.md)
def test_faults_against_the_server_matches_in_process(qwen_llama_server, tmp_path):
    """``faults run`` through the server (the prompt rendered here from tokenizer=, scored
    by forced completions whose tokens come from the local tokenizer) against the
    in-process llama.cpp backend on the same GGUF: the per-token surprisals S0 and S1 of
    the site return agree within 0.1 nats/token. The stand-in mini domain keeps the
    prompt inside the server's 4,096-token window. ``check_template=false``: faults
    renders its own prompts and scores them as completions, and llama-cpp-python's
    template writes tool-call arguments differently (2,654 vs 2,647 tokens)."""
    common = ["--domain", "mini", "--tasks", "1", "--k-max", "0", "--arms", "clean", "failed"]
    spec = _served(qwen_llama_server) + f",api_key_env={LLAMA_KEY_ENV},check_template=false"
    served_dir, local_dir = tmp_path / "served", tmp_path / "local"
    assert main(["-q", "faults", "run", "--out", str(served_dir), "--model", spec, *common]) == 0
    assert (
        main(["-q", "faults", "run", "--out", str(local_dir), "--model", "llama:qwen", *common])
        == 0
    )
    served, local = _faults_rows(served_dir), _faults_rows(local_dir)
    assert served.keys() == local.keys() and len(served) == 2  # clean and failed at k = 0
    for key in served:
        for field in ("s0", "s1"):
            assert abs(served[key][field] - local[key][field]) <= 0.1, (key, field)

"""``toolaudit models`` subcommands, run through the real entry point."""

from __future__ import annotations

import json

import pytest

from tests.models.test_sklearn import planted_examples
from toolaudit.cli.main import main
from toolaudit.traces._jsonl import write_jsonl


def test_cli_models_score_json_with_callable_backend(capsys):
    rc = main(
        ["models", "score", "py:tests.models.toy_backend:echo_upper", "--context", "abcd",
         "--continuation", "xy", "--json"]
    )  # fmt: skip
    assert rc == 0
    out = json.loads(capsys.readouterr().out)
    assert out["logprobs"] == [-4.0, -4.0]
    assert out["sum"] == -8.0 and out["mean_surprisal"] == 4.0 and out["tokens"] == 2


def test_cli_models_chat_turn_needs_a_model_that_renders_a_chat(capsys):
    """``--chat`` renders the context as a user turn through the model's own template, on
    any backend that has one; a plain function has none and says so in one line."""
    rc = main(["models", "score", "py:tests.models.toy_backend:echo_upper", "--context", "ab",
               "--continuation", "x", "--chat"])  # fmt: skip
    err = capsys.readouterr().err.strip()
    assert rc == 2 and len(err.splitlines()) == 1
    assert "cannot render a chat" in err and "chat template" in err


def test_cli_models_generate_prints_completion(capsys):
    rc = main(["models", "generate", "py:tests.models.toy_backend:echo_upper", "--prompt", "hi you",
               "--stop", " "])  # fmt: skip
    assert rc == 0
    assert capsys.readouterr().out == "HI\n"


def test_cli_models_train_controlled_then_score(tmp_path, capsys):
    data = tmp_path / "examples.jsonl"
    write_jsonl(data, planted_examples(120, seed=2))
    out = tmp_path / "frozen.joblib"
    assert main(["models", "train-controlled", str(tmp_path), "--out", str(out), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["train_rows"] == 45 and out.is_file()
    assert main(["models", "generate", f"sklearn:{out}", "--prompt", "complex_id: 2XAB"]) == 0
    assert capsys.readouterr().out.startswith("<answer>")


def test_cli_models_bad_spec_exits_2_with_one_line(capsys):
    rc = main(["models", "score", "bogus:x", "--context", "a", "--continuation", "b"])
    assert rc == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "invalid model backend='bogus'" in err


def test_cli_models_train_missing_file_exits_2(tmp_path, capsys):
    rc = main(["models", "train-controlled", str(tmp_path / "none.jsonl"), "--out", "x.joblib"])
    assert rc == 2
    assert "none.jsonl" in capsys.readouterr().err


@pytest.mark.parametrize("sub", ["score", "generate", "compare", "train-controlled", "prepare"])
def test_cli_models_help_has_example(sub, capsys):
    assert main(["models", sub, "--help"]) == 0
    assert "Example:\n  toolaudit models " + sub in capsys.readouterr().out


def test_cli_models_prepare_prints_cached_folder(capsys):
    assert main(["models", "prepare", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["default"] == "embedded:qwen"
    assert "qwen2.5-coder-0.5b-instruct-1d9614638d18024d" in out["model_dir"]
    assert out["gguf"].endswith("qwen2.5-coder-0.5b-instruct.gguf")
    assert "gemma3-270m-" in out["models"]["gemma"]["model_dir"]


def test_cli_models_compare_identical_backends_agree_exactly(capsys):
    spec = "py:tests.models.toy_backend:echo_upper"
    rc = main(["models", "compare", spec, spec, "--context", "ab", "--continuation", "xyz",
               "--context", "abcd", "--continuation", "q", "--json"])  # fmt: skip
    assert rc == 0
    out = json.loads(capsys.readouterr().out)
    assert out["tokens"] == 4 and out["pooled_delta"] == 0.0 and out["max_token_delta"] == 0.0
    assert out["mean_surprisal_a"] == pytest.approx((3 * 2 + 4) / 4)


def test_cli_models_compare_unpaired_texts_exit_2(capsys):
    spec = "py:tests.models.toy_backend:echo_upper"
    rc = main(["models", "compare", spec, spec, "--context", "a", "--context", "b",
               "--continuation", "x"])  # fmt: skip
    assert rc == 2
    assert "paired in order" in capsys.readouterr().err

"""Bad input to ``toolaudit models``: exit 2 and one line naming the model and the fix."""

from __future__ import annotations

import json

import pytest

from toolaudit.cli.main import main

PY = "py:tests.models.toy_backend:echo_upper"
SCORE = ["--context", "a", "--continuation", "b"]


def _run(argv: list[str], capsys) -> str:
    rc = main(argv)
    err = capsys.readouterr().err.strip()
    assert rc == 2, err
    assert err and "\n" not in err and "Traceback" not in err
    return err


def test_cli_models_unknown_embedded_name(capsys):
    err = _run(["models", "score", "embedded:llama", *SCORE], capsys)
    assert "invalid embedded model='llama'; allowed: 'gemma', 'qwen'" in err


def test_cli_models_missing_hf_folder(tmp_path, capsys):
    err = _run(["models", "score", f"hf:{tmp_path / 'nope'}", *SCORE], capsys)
    assert f"hf:{tmp_path / 'nope'}: no such model folder" in err


def test_cli_models_hf_folder_without_a_model(tmp_path, capsys):
    err = _run(["models", "score", f"hf:{tmp_path}", *SCORE], capsys)
    assert f"hf:{tmp_path}: cannot load the model" in err and "config.json" in err


def test_cli_models_garbage_sklearn_file(tmp_path, capsys):
    bad = tmp_path / "model.joblib"
    bad.write_bytes(b"not a pickle at all")
    err = _run(["models", "generate", f"sklearn:{bad}", "--prompt", "x"], capsys)
    assert f"sklearn:{bad}: not a joblib-saved scikit-learn pipeline" in err


@pytest.mark.parametrize("kind", ["directory", "not-sqlite"])
def test_cli_models_unusable_cache(tmp_path, capsys, kind):
    cache = tmp_path / "c.sqlite"
    if kind == "directory":
        cache.mkdir()
    else:
        cache.write_text("this is not a database, it is text " * 100)
    err = _run(["models", "score", PY, *SCORE, "--cache", str(cache)], capsys)
    assert str(cache) in err and ("directory" in err or "SQLite" in err)


def test_cli_models_unreachable_server(capsys):
    err = _run(
        ["models", "score", "openai:m@http://127.0.0.1:9/v1", *SCORE, "--request-timeout", "1"],
        capsys,
    )
    assert "openai:m@http://127.0.0.1:9/v1: scoring failed after" in err
    assert "check that the server is running" in err


def test_cli_models_compare_takes_a_finite_request_timeout(capsys):
    py = "py:tests.models.toy_backend:echo_upper"
    argv = ["models", "compare", py, "openai:m@http://127.0.0.1:9/v1", *SCORE]
    assert "--request-timeout" in _run([*argv, "--request-timeout", "nan"], capsys)


def test_cli_models_chat_needs_a_template(tmp_path, capsys):
    msgs = tmp_path / "m.json"
    msgs.write_text(json.dumps([{"role": "user", "content": "hi"}]))
    err = _run(["models", "score", PY, "--messages", str(msgs)], capsys)
    assert "py:tests.models.toy_backend:echo_upper: cannot render a chat" in err


def test_cli_models_bad_messages_file(tmp_path, capsys):
    msgs = tmp_path / "m.json"
    msgs.write_text(json.dumps([{"role": "wizard", "content": "hi"}]))
    err = _run(["models", "score", "embedded:qwen", "--messages", str(msgs)], capsys)
    assert f"{msgs}, field 'messages[0].role'" in err
    msgs.write_text("{not json")
    assert "not JSON" in _run(["models", "generate", PY, "--messages", str(msgs)], capsys)


def test_cli_models_local_options_rejected_for_remote_specs(capsys):
    err = _run(["models", "score", PY, *SCORE, "--truncate", "left"], capsys)
    assert "--truncate applies to hf/embedded models only" in err


@pytest.mark.slow
@pytest.mark.model
def test_cli_models_score_messages_shows_call_and_reply(tmp_path, capsys):
    from tests.models.test_chat import ASK, TOOLS

    msgs, tools = tmp_path / "m.json", tmp_path / "t.json"
    msgs.write_text(json.dumps(ASK))
    tools.write_text(json.dumps(TOOLS))
    rc = main(["models", "score", "embedded:qwen", "--messages", str(msgs), "--tools",
               str(tools), "--json", "--device", "cpu"])  # fmt: skip
    assert rc == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out["openers"]) == {'{"', "```", "<tool_call>"}
    assert out["p_call"] == pytest.approx(sum(out["openers"].values()))
    assert out["p_call"] + out["p_reply"] == pytest.approx(1.0)
    # Measured 0.50 (`{"` 0.35, fence 0.15, <tool_call> < 1e-4): a bare JSON call leads.
    assert out["p_call"] > 0.3
    assert max(out["openers"], key=out["openers"].get) == '{"'
    assert out["openers"]["<tool_call>"] < 0.01


def test_cli_models_cache_root_that_is_a_file(tmp_path, capsys, monkeypatch):
    afile = tmp_path / "afile"
    afile.write_text("x")
    monkeypatch.setenv("TOOLAUDIT_CACHE", str(afile))
    err = _run(["models", "score", "embedded:gemma", *SCORE], capsys)
    assert f"$TOOLAUDIT_CACHE={afile} is a file, not a folder" in err


@pytest.mark.model
@pytest.mark.parametrize(
    ("damage", "says"),
    [("empty", "(model.safetensors: SHA-256"), ("truncated", "(model.safetensors: SHA-256"),
     ("zeros of the same size", "(model.safetensors: SHA-256"),
     ("no digest record", "(SafetensorError")],
)  # fmt: skip
def test_cli_models_damaged_prepared_model_names_the_folder_and_the_fix(
    tmp_path, capsys, monkeypatch, damage, says
):
    """A prepared folder is checked against the SHA-256 of its files recorded when it was
    converted: zeroed weights of the right size give finite logits and would pass the
    probe-text check under the same identity. A folder prepared before digests were kept
    still fails on its damaged weights as safetensors reads them."""
    import shutil

    from toolaudit.models import embedded_model_dir, verify_prepared

    real = embedded_model_dir("gemma")  # the prepared folder (converted once, cached)
    verify_prepared(real)
    broken = tmp_path / "models" / real.name
    broken.mkdir(parents=True)
    for f in real.iterdir():
        if f.name != "model.safetensors" and not (
            damage == "no digest record" and f.name == "toolaudit-digests.json"
        ):
            shutil.copy(f, broken / f.name)
    weights = broken / "model.safetensors"
    if damage == "zeros of the same size":
        with weights.open("wb") as fh:
            fh.truncate((real / "model.safetensors").stat().st_size)
    else:
        with (real / "model.safetensors").open("rb") as fh:
            weights.write_bytes(fh.read(1000) if damage != "empty" else b"")
    monkeypatch.setenv("TOOLAUDIT_CACHE", str(tmp_path))
    err = _run(["models", "score", "embedded:gemma", *SCORE], capsys)
    assert f"{broken}: the prepared model files are damaged {says}" in err
    assert "toolaudit models prepare --force" in err


def test_a_local_model_loads_under_a_transient_status_only_on_a_terminal(monkeypatch) -> None:
    import io
    import sys

    from toolaudit.cli._models import _load_now

    class Lazy:
        loads = 0

        @property
        def model(self) -> object:
            Lazy.loads += 1
            return object()

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    monkeypatch.setattr(sys, "stderr", io.StringIO())
    _load_now(Lazy(), "embedded:qwen")
    assert Lazy.loads == 0 and sys.stderr.getvalue() == ""  # a log or a pipe: nothing
    monkeypatch.setattr(sys, "stderr", Terminal())
    _load_now(Lazy(), "embedded:qwen")
    assert Lazy.loads == 1  # loaded under the status, which leaves no line behind

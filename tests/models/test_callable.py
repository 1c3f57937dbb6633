"""The ``py:module:function`` backend."""

from __future__ import annotations

import pytest

from toolaudit.errors import ModelError
from toolaudit.models import load_model


def test_callable_generate_passes_max_tokens_and_cuts_stop():
    lm = load_model("py:tests.models.toy_backend:echo_upper")
    assert lm.identity == "py:tests.models.toy_backend:echo_upper"
    assert lm.complete(["abc def", "xy"], max_tokens=5, stop=[" "]) == ["ABC", "XY"]


def test_callable_loglikelihood_uses_attribute():
    lm = load_model("py:tests.models.toy_backend:echo_upper")
    assert lm.loglikelihood([("abc", "xy")]) == [[-3.0, -3.0]]


def test_callable_without_loglikelihood_raises():
    lm = load_model("py:tests.models.toy_backend:no_scoring")
    with pytest.raises(ModelError, match="no 'loglikelihood'"):
        lm.loglikelihood([("a", "b")])


@pytest.mark.parametrize(
    ("answer", "says"),
    [
        ([float("nan")], "is not finite"),
        ([5.0], "is above 0"),
        ([], "no log-probability for a non-empty continuation"),
        ([float("inf")], "is not finite"),
    ],
)
def test_impossible_log_probabilities_are_refused_where_they_enter(answer, says):
    from tests.models import toy_backend

    toy_backend.impossible.answer = answer
    lm = load_model("py:tests.models.toy_backend:impossible")
    with pytest.raises(ModelError, match=says):
        lm.loglikelihood([("The capital of France is", " Paris")])


def test_a_response_cache_holding_an_impossible_value_is_refused(tmp_path):
    import sqlite3

    from tests.models import toy_backend

    toy_backend.impossible.answer = [-0.5]
    cache = tmp_path / "c.sqlite"
    lm = load_model("py:tests.models.toy_backend:impossible", cache=cache)
    assert lm.loglikelihood([("a", " b")]) == [[-0.5]]
    with sqlite3.connect(cache) as db:  # someone edits the cache by hand
        db.execute("update responses set value = ?", ("[5.0]",))
    again = load_model("py:tests.models.toy_backend:impossible", cache=cache)
    with pytest.raises(ModelError, match="response cache"):
        again.loglikelihood([("a", " b")])


def test_models_generate_prints_a_servers_escape_bytes_visibly(tmp_path, capsys):
    # A reply full of terminal escapes (a hidden hyperlink, colours) is printed with the
    # control characters written out, never sent raw to the terminal.
    import json

    from toolaudit.cli.main import main

    chat = tmp_path / "chat.json"
    chat.write_text(json.dumps([{"role": "user", "content": "hi"}]))
    spec = "py:tests.models.toy_backend:impossible"
    assert main(["models", "generate", spec, "--messages", str(chat)]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\x07" not in out
    assert "\\x1b]8;;http://evil.example\\x07click" in out

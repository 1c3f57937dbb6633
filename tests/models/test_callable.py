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

"""An OpenAI-compatible server that sends numbers as strings (issue 43): the
log-probabilities or the token offsets of its echo are refused in one line naming the
server, never read through ``float("-1.5")`` or compared as text."""

from __future__ import annotations

from typing import Any

import pytest


def test_an_echo_with_offsets_or_logprobs_as_strings_is_refused() -> None:
    from types import SimpleNamespace

    from toolaudit.errors import ModelError
    from toolaudit.models._echo import continuation_logprobs, read_echo

    def resp(offsets: list[Any], values: list[Any]) -> Any:
        lp = SimpleNamespace(tokens=["hello", " world", "!"], text_offset=offsets,
                             token_logprobs=values)  # fmt: skip
        usage = SimpleNamespace(prompt_tokens=2, completion_tokens=1)
        return SimpleNamespace(choices=[SimpleNamespace(logprobs=lp)], usage=usage)

    with pytest.raises(ModelError, match=r"text_offset 0 is a str \('0'\), not an integer"):
        read_echo(resp(["0", "5", "11"], [None, -1.5, -0.2]), context="hello",
                  prompt="hello world", source="srv")  # fmt: skip
    with pytest.raises(ModelError, match="continuation token 0 is a str"):
        continuation_logprobs(resp([0, 5, 11], [None, "-1.5", "-0.2"]), context="hello",
                              prompt="hello world", source="srv")  # fmt: skip
    ok = resp([0, 5, 11], [None, -1.5, -0.2])
    assert continuation_logprobs(ok, context="hello", prompt="hello world", source="s") == [-1.5]

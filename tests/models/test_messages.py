"""Chat messages as a user gives them (issue 43): OpenAI content-part lists are read as
their text parts joined, and every other shape is refused in one line naming the file and
the message's field, before any model loads."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from toolaudit.cli.main import main
from toolaudit.errors import TraceFormatError
from toolaudit.models import check_messages
from toolaudit.models._messages import content_text

NO_MODEL = "hf:/nonexistent/toolaudit-model"  # a check after loading would fail on this


def test_content_parts_render_as_the_joined_text_in_qwens_chatml_template() -> None:
    """The embedded Qwen's own template (read from its tokenizer files, no weights)
    writes a content-part chat exactly as the same chat with string content."""
    from toolaudit.models._template import load_served_tokenizer

    served = load_served_tokenizer("embedded:qwen")
    parts = [{"role": "system", "content": [{"type": "text", "text": "Be brief."}]},
             {"role": "user", "content": [{"type": "text", "text": "Where is "},
                                          {"type": "text", "text": "order #W1?"}]}]  # fmt: skip
    plain = [{"role": "system", "content": "Be brief."},
             {"role": "user", "content": "Where is order #W1?"}]  # fmt: skip
    rendered = served.render(check_messages(parts))
    assert rendered == served.render(plain)
    assert "<|im_start|>user\nWhere is order #W1?<|im_end|>" in rendered
    assert served.render(parts) == rendered  # the template layer joins parts itself too


def test_content_text_joins_text_parts_and_names_others() -> None:
    assert content_text([{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]) == "ab"
    assert content_text(None) == "" and content_text("x") == "x"
    with pytest.raises(TraceFormatError, match=r"'image_url' parts are not supported"):
        content_text([{"type": "image_url", "image_url": {"url": "http://x"}}])


@pytest.mark.parametrize(
    ("messages", "expect"),
    [
        ([], "field 'messages': empty (expected at least one)"),
        ([{"role": "user", "content": 5}],
         "field 'messages[0].content': expected a string, null or a list of content parts, "
         "got an integer"),
        ([{"role": "user", "content": [{"type": "input_audio", "input_audio": {}}]}],
         "field 'messages[0].content[0].type': 'input_audio' parts are not supported"),
        ([{"role": "user", "content": [{"type": "text", "text": 3}]}],
         "field 'messages[0].content[0].text': expected a string, got an integer"),
        ([{"role": "user", "content": "hi"}, {"role": "robot", "content": "x"}],
         "field 'messages[1].role'"),
        ([{"role": "assistant", "content": None, "tool_calls": "call"}],
         "field 'messages[0].tool_calls'"),
    ],
)  # fmt: skip
@pytest.mark.parametrize("command", ["score", "generate"])
def test_bad_messages_are_refused_in_one_line_before_the_model(
    messages: list, expect: str, command: str, tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    path = tmp_path / "chat.json"
    path.write_text(json.dumps(messages))
    assert main(["models", command, NO_MODEL, "--messages", str(path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and str(path) in err[0] and expect in err[0], err

"""Chat messages as a user gives them (``models score/generate --messages``): checked,
and OpenAI content-part lists turned into the text every chat template reads.

The OpenAI chat format lets ``content`` be a string, null, or a list of parts
(``[{"type": "text", "text": "..."}]``). A text-only model reads text: the text parts are
joined (with nothing between them, as the templates that accept part lists write them),
and any other part (an image, audio, a file) is refused by its type, since a text model
would silently score the chat without it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

from toolaudit.errors import TraceFormatError
from toolaudit.models._base import ChatTurn

ROLES = ("system", "user", "assistant", "tool")


def _kind(value: Any) -> str:
    from toolaudit.traces import kind_of

    return kind_of(value)


def content_text(content: Any, *, source: object = "messages", field: str = "content") -> str:
    """The text of a message's ``content``: a string as it is, null as ``""``, a list of
    OpenAI content parts as its text parts joined. Raises TraceFormatError naming
    ``field`` for any other value or part type.

    >>> content_text([{"type": "text", "text": "Hello, "}, {"type": "text", "text": "world"}])
    'Hello, world'
    """
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        raise TraceFormatError(
            source, None, field,
            f"expected a string, null or a list of content parts, got {_kind(content)}",
        )  # fmt: skip
    texts = []
    for i, part in enumerate(content):
        where = f"{field}[{i}]"
        if not isinstance(part, dict):
            raise TraceFormatError(source, None, where, f"expected a content part object, "
                                   f"got {_kind(part)}")  # fmt: skip
        kind = part.get("type")
        if kind != "text":
            raise TraceFormatError(
                source, None, f"{where}.type",
                f"{kind!r} parts are not supported by a text model: only 'text' parts",
            )  # fmt: skip
        text = part.get("text")
        if not isinstance(text, str):
            raise TraceFormatError(source, None, f"{where}.text",
                                   f"expected a string, got {_kind(text)}")  # fmt: skip
        texts.append(text)
    return "".join(texts)


def check_messages(data: Any, *, source: object = "messages") -> list[ChatTurn]:
    """A chat as the model layer takes it, from a user's JSON list of OpenAI-style
    messages: at least one message, each an object with a known ``role``, its
    ``content`` text (content parts joined, :func:`content_text`), and ``tool_calls`` a
    list of objects where present. Raises TraceFormatError naming ``source`` and the
    message's field.

    >>> check_messages([{"role": "user", "content": [{"type": "text", "text": "hi"}]}])
    [{'role': 'user', 'content': 'hi'}]
    """
    if not isinstance(data, list):
        raise TraceFormatError(source, None, "messages",
                               f"expected a list of messages, got {_kind(data)}")  # fmt: skip
    if not data:
        raise TraceFormatError(source, None, "messages", "empty: a chat needs a message")
    out: list[ChatTurn] = []
    for i, m in enumerate(data):
        where = f"messages[{i}]"
        if not isinstance(m, dict):
            raise TraceFormatError(source, None, where, f"expected an object, got {_kind(m)}")
        if m.get("role") not in ROLES:
            raise TraceFormatError(
                source, None, f"{where}.role",
                f"expected system, user, assistant or tool, got {m.get('role')!r}",
            )  # fmt: skip
        calls = m.get("tool_calls")
        if calls is not None and (
            not isinstance(calls, list) or not all(isinstance(c, dict) for c in calls)
        ):
            raise TraceFormatError(source, None, f"{where}.tool_calls",
                                   "expected a list of tool-call objects")  # fmt: skip
        turn = dict(m)
        turn["content"] = content_text(m.get("content"), source=source, field=f"{where}.content")
        out.append(cast(ChatTurn, turn))
    return out


def text_messages(messages: Sequence[ChatTurn]) -> list[dict[str, Any]]:
    """Copies whose ``content`` is text (content-part lists joined, null as ``""``), for a
    template that reads ``message.content`` as a string."""
    return [{**m, "content": content_text(m.get("content"))} for m in messages]

"""Low-level reading shared by the loaders: whole JSON documents, the first JSONL line,
and field access whose errors name the file, the line (or record path) and the field.

Field locations inside a JSON document are written as paths such as
``simulations[3].messages[2].role``, so the record index is always part of the message.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from toolaudit.errors import TraceFormatError
from toolaudit.traces._files import read_regular
from toolaudit.traces._jsonl import iter_text_lines
from toolaudit.traces._numbers import HugeNumber, parse_int

_MISSING = object()


def read_json_document(path: str | Path) -> Any:
    """Parse a whole JSON document (tau2-bench and tau-bench results are single documents).

    Raises TraceFormatError with the line of the problem for empty files, bytes that are
    not UTF-8 and malformed JSON, and without reading for anything but a regular file (a
    link loop, a FIFO, a device). Integers too long for Python are kept as
    :class:`~toolaudit.traces._numbers.HugeNumber`, refused where a field is read.
    """
    path = Path(path)
    raw = read_regular(path)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise TraceFormatError(path, line, None, f"not valid UTF-8 (byte {exc.start})") from None
    if not text.strip():
        raise TraceFormatError(path, None, None, "file is empty (no JSON records)")
    try:
        return json.loads(text, parse_int=parse_int)
    except json.JSONDecodeError as exc:
        raise TraceFormatError(
            path, exc.lineno, None, f"malformed JSON at column {exc.colno} ({exc.msg})"
        ) from None
    except RecursionError:
        raise TraceFormatError(path, None, None, "JSON nested too deeply") from None
    except ValueError as exc:  # any other number the parser cannot convert
        raise TraceFormatError(path, None, None, f"unreadable JSON ({exc})") from None


def first_record_line(path: str | Path) -> tuple[int, str]:
    """The first non-blank line of a file and its number, decoded as UTF-8.

    Only that line is read, so sniffing a large JSONL file costs one line of memory.
    """
    return next(iter_text_lines(path))


def field(
    obj: Any,
    key: str,
    *,
    path: str | Path,
    where: str,
    line: int | None = None,
    kind: type | tuple[type, ...] | None = None,
    default: Any = _MISSING,
) -> Any:
    """``obj[key]`` with a TraceFormatError naming ``where.key`` when missing or mistyped.

    ``default`` makes the field optional (used when it is absent or null); ``kind``
    checks the type of a present value. A number must be finite: JSON readers accept
    ``NaN`` and ``Infinity``, which no reward, score or count can be.
    """
    name = f"{where}.{key}" if where else key
    if not isinstance(obj, dict):
        raise TraceFormatError(path, line, where or "<record>", "expected a JSON object")
    value = obj.get(key, _MISSING)
    if value is _MISSING or (value is None and default is not _MISSING):
        if default is _MISSING:
            raise TraceFormatError(path, line, name, "missing required field")
        return default
    if kind is not None and not isinstance(value, kind):
        raise TraceFormatError(
            path, line, name, f"expected {_kind_name(kind)}, got {_kind_name(type(value))}"
        )
    if isinstance(value, HugeNumber):
        raise TraceFormatError(path, line, name, f"{value} is too long to be a number here")
    if isinstance(value, float) and not math.isfinite(value):
        raise TraceFormatError(path, line, name, f"{value} is not a finite number")
    return value


def kind_of(value: Any) -> str:
    """How a JSON value's type reads in an error message: ``an object``, ``a list``, ..."""
    return _kind_name(type(value))


def _kind_name(kind: type | tuple[type, ...]) -> str:
    kinds = kind if isinstance(kind, tuple) else (kind,)
    names = {
        dict: "an object",
        list: "a list",
        str: "a string",
        int: "an integer",
        float: "a number",
        bool: "a boolean",
        type(None): "null",
        HugeNumber: "an integer too long to read",
    }
    return " or ".join(names.get(k, k.__name__) for k in kinds)


def as_text(value: Any) -> str:
    """Serialize a tool result or field value as text (JSON for structured values)."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, sort_keys=True)

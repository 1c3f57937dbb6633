"""Streaming JSON Lines I/O with errors that name the file, the line and the field."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, ValidationError

from toolaudit.errors import TraceFormatError
from toolaudit.traces._files import open_regular
from toolaudit.traces._numbers import parse_int

M = TypeVar("M", bound=BaseModel)


def _field_of(err: ValidationError) -> str:
    first = err.errors()[0]
    return ".".join(str(p) for p in first["loc"]) or "<record>"


def iter_text_lines(path: str | Path) -> Iterator[tuple[int, str]]:
    """Yield ``(line_number, text)`` for each non-blank line, decoded as UTF-8; one line
    in memory at a time. Raises a located error on bad bytes or an empty file."""
    path = Path(path)
    seen = False
    with open_regular(path) as fh:
        for lineno, raw in enumerate(fh, start=1):
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise TraceFormatError(
                    path, lineno, None, f"not valid UTF-8 (byte {exc.start})"
                ) from None
            if text.strip():
                seen = True
                yield lineno, text
    if not seen:
        raise TraceFormatError(path, None, None, "file is empty (no JSON records)")


def iter_json_objects(path: str | Path) -> Iterator[tuple[int, dict]]:
    """Yield ``(line_number, object)`` for each non-blank line; one line in memory at a time."""
    for lineno, text in iter_text_lines(path):
        try:
            obj = json.loads(text, parse_int=parse_int)
        except json.JSONDecodeError as exc:
            raise TraceFormatError(
                path, lineno, None, f"malformed JSON at column {exc.colno} ({exc.msg})"
            ) from None
        except RecursionError:
            raise TraceFormatError(path, lineno, None, "JSON nested too deeply") from None
        except ValueError as exc:  # any other number the parser cannot convert
            raise TraceFormatError(path, lineno, None, f"unreadable JSON ({exc})") from None
        if not isinstance(obj, dict):
            raise TraceFormatError(
                path, lineno, None, f"expected a JSON object, got {type(obj).__name__}"
            )
        yield lineno, obj


def validate_record(model: type[M], obj: dict, path: str | Path, line: int | None) -> M:
    """Validate one object as ``model``, re-raising as a TraceFormatError naming the field."""
    try:
        return model.model_validate(obj)
    except ValidationError as exc:
        first = exc.errors()[0]
        raise TraceFormatError(path, line, _field_of(exc), first["msg"].lower()) from None


def read_jsonl(path: str | Path, model: type[M]) -> Iterator[M]:
    """Stream records of type ``model`` from a JSONL file."""
    for lineno, obj in iter_json_objects(path):
        yield validate_record(model, obj, path, lineno)


def write_jsonl(path: str | Path, records: Iterable[BaseModel]) -> int:
    """Write records as JSON Lines (stable key order); returns the number written."""
    n = 0
    with Path(path).open("w", encoding="utf-8") as fh:
        for rec in records:
            fh.write(rec.model_dump_json(exclude_none=False))
            fh.write("\n")
            n += 1
    return n


def append_jsonl(path: str | Path, record: BaseModel) -> None:
    """Append one record and flush, so long runs lose nothing when interrupted."""
    with Path(path).open("a", encoding="utf-8") as fh:
        fh.write(record.model_dump_json())
        fh.write("\n")
        fh.flush()

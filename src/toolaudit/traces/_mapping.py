"""JSONL in any layout, turned into Examples through a field mapping of dotted paths.

A path is a sequence of keys separated by dots, with ``[i]`` for a list index and
``[*]`` for every element of a list: ``meta.reward``, ``task.id``,
``tool_outputs[*].text``. A mapping is usually written as a JSON file:

.. code-block:: json

    {"id": "uid", "label": "meta.reward", "label_threshold": 1.0, "group": "task.id",
     "split": "split", "tools": "tool_outputs[*].text", "tool_names": "tool_outputs[*].name",
     "prompt": "prompt", "fields": {"question": "input.question"}}
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from toolaudit.errors import ConfigError, TraceFormatError
from toolaudit.traces._jsonl import iter_json_objects
from toolaudit.traces._schema import ChatMessage, Example, ToolSection
from toolaudit.traces._source import as_text

FORMAT = "mapped"
_TOKEN = re.compile(r"([^.\[\]]+)|\[(\*|\d+)\]")
_MISSING = object()


class FieldMapping(BaseModel):
    """Where each Example field lives in a foreign JSONL record (dotted paths).

    ``label`` may point at a boolean, a 0/1 integer, a number (then ``label_threshold``
    is required: label = value >= threshold) or a string (then ``label_positive`` lists
    the strings that mean 1). ``tools`` and ``tool_names`` usually use ``[*]`` and must
    yield lists of the same length; without ``tool_names`` sections are named
    ``tool_1``, ``tool_2``, ... Unset optional paths leave the Example's default
    (``id`` defaults to ``<file stem>:<line>``). A path that is set must exist in every
    record (its value may be null), except ``meta`` paths, which are copied when present.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    label: str
    label_threshold: float | None = None
    label_positive: list[str] | None = None
    id: str | None = None
    group: str | None = None
    split: str | None = None
    tools: str | None = None
    tool_names: str | None = None
    prompt: str | None = None
    messages: str | None = None
    answer: str | None = None
    fields: dict[str, str] = Field(default_factory=dict)
    meta: dict[str, str] = Field(default_factory=dict)

    @classmethod
    def from_file(cls, path: str | Path) -> FieldMapping:
        """Read a mapping from a JSON file (errors name the file and the field)."""
        path = Path(path)
        try:
            obj = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError) as exc:
            raise ConfigError(f"cannot read mapping file {path}: {exc}") from None
        except json.JSONDecodeError as exc:
            raise TraceFormatError(path, exc.lineno, None, f"malformed JSON ({exc.msg})") from None
        try:
            return cls.model_validate(obj)
        except ValidationError as exc:
            first = exc.errors()[0]
            loc = ".".join(str(p) for p in first["loc"]) or "<record>"
            raise TraceFormatError(path, None, loc, first["msg"].lower()) from None


def parse_path(path: str) -> list[str | int]:
    """Split a dotted path into keys, indices and ``"*"`` wildcards.

    >>> parse_path("tool_outputs[*].text")
    ['tool_outputs', '*', 'text']
    """
    parts: list[str | int] = []
    pos = 0
    for m in _TOKEN.finditer(path):
        between = path[pos : m.start()]
        if between not in ("", "."):
            raise ConfigError.invalid("path", "dotted keys with [i] or [*]", path)
        pos = m.end()
        key, index = m.group(1), m.group(2)
        if key is not None:
            parts.append(key)
        else:
            parts.append("*" if index == "*" else int(index))
    if not parts or path[pos:] not in ("",):
        raise ConfigError.invalid("path", "dotted keys with [i] or [*]", path)
    return parts


def resolve(obj: Any, path: str) -> Any:
    """The value at ``path`` (a list when the path has ``[*]``); raises KeyError(path)
    naming the first missing step."""
    values = [obj]
    wildcard = False
    done: list[str] = []
    for part in parse_path(path):
        nxt = []
        for v in values:
            if part == "*":
                if not isinstance(v, list):
                    raise KeyError(_join(done) + "[*]")
                nxt.extend(v)
            elif isinstance(part, int):
                if not isinstance(v, list) or part >= len(v):
                    raise KeyError(_join(done) + f"[{part}]")
                nxt.append(v[part])
            else:
                if not isinstance(v, dict) or part not in v:
                    raise KeyError(_join([*done, part]))
                nxt.append(v[part])
        wildcard = wildcard or part == "*"
        done.append(f"[{part}]" if part == "*" or isinstance(part, int) else part)
        values = nxt
    return values if wildcard else values[0]


def _join(parts: list[str]) -> str:
    return "".join(p if p.startswith("[") or i == 0 else f".{p}" for i, p in enumerate(parts))


def load_mapped(path: str | Path, mapping: FieldMapping) -> Iterator[Example]:
    """Stream Examples from a JSONL file in a foreign layout, one line at a time."""
    path = Path(path)
    for lineno, obj in iter_json_objects(path):
        yield _example(obj, mapping, path=path, line=lineno)


def _get(obj: Any, p: str, *, path: Path, line: int, default: Any = _MISSING) -> Any:
    try:
        return resolve(obj, p)
    except KeyError as exc:
        if default is not _MISSING:
            return default
        raise TraceFormatError(path, line, str(exc.args[0]), "missing required field") from None


def _label(value: Any, m: FieldMapping, *, path: Path, line: int) -> int:
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, str) and m.label_positive is not None:
        return int(value in m.label_positive)
    if isinstance(value, int | float):
        if m.label_threshold is not None:
            return int(value >= m.label_threshold)
        if value in (0, 1):
            return int(value)
        raise TraceFormatError(
            path, line, m.label, f"label {value!r} is not 0/1; set label_threshold in the mapping"
        )
    raise TraceFormatError(
        path, line, m.label, f"cannot read a label from {type(value).__name__} {value!r}"
    )


def _example(obj: dict[str, Any], m: FieldMapping, *, path: Path, line: int) -> Example:
    tools: list[ToolSection] = []
    if m.tools:
        contents = _get(obj, m.tools, path=path, line=line)
        contents = contents if isinstance(contents, list) else [contents]
        names = (
            _get(obj, m.tool_names, path=path, line=line)
            if m.tool_names
            else [f"tool_{i + 1}" for i in range(len(contents))]
        )
        names = names if isinstance(names, list) else [names]
        if len(names) != len(contents):
            raise TraceFormatError(
                path,
                line,
                m.tool_names,
                f"{len(names)} tool names for {len(contents)} tool sections",
            )
        tools = [
            ToolSection(name=as_text(n), content=as_text(c))
            for n, c in zip(names, contents, strict=True)
        ]
    messages = None
    if m.messages:
        raw = _get(obj, m.messages, path=path, line=line)
        if isinstance(raw, list):
            messages = [
                ChatMessage(role=as_text(x.get("role")), content=as_text(x.get("content")))
                for x in raw
                if isinstance(x, dict)
            ]

    def opt(p: str | None) -> str | None:
        if p is None:
            return None
        v = _get(obj, p, path=path, line=line)  # a mapped path must exist; null is allowed
        return None if v is None else as_text(v)

    return Example(
        id=opt(m.id) or f"{path.stem}:{line}",
        label=_label(_get(obj, m.label, path=path, line=line), m, path=path, line=line),  # type: ignore[arg-type]
        group=opt(m.group) or "",
        split=opt(m.split) or "",
        fields={k: as_text(_get(obj, p, path=path, line=line)) for k, p in m.fields.items()},
        tools=tools,
        prompt=opt(m.prompt),
        messages=messages,
        answer=opt(m.answer),
        meta={k: _get(obj, p, path=path, line=line, default=None) for k, p in m.meta.items()},
    )

"""JSONL in any layout, read into Examples or Episodes through a mapping of JMESPath
expressions (https://jmespath.org).

JMESPath keeps the dotted grammar (``meta.reward``, ``a[0]``, ``tool_outputs[*].text``)
and adds filters, slices, flattening and functions: ``messages[?role=='tool'].content``,
``observations[?type=='GENERATION'] | [-1].input``. A mapping is a JSON file; ``kind``
says what it produces:

.. code-block:: json

    {"kind": "examples", "id": "uid", "label": "meta.reward", "label_threshold": 1.0,
     "group": "task.id", "tools": "tool_outputs[*].text", "tool_names": "tool_outputs[*].name"}

    {"kind": "episodes", "task_id": "metadata.task_id", "reward": "metadata.reward",
     "messages": "messages"}

An Episode mapping reads OpenAI-style messages by default (``role``, ``content`` as text or
a list of text parts, ``tool_calls[{id, function: {name, arguments}}]`` with arguments as
a JSON string or object, ``tool_call_id``, ``name``); ``message`` and ``tool_call`` change
where those live inside each message or call. Every expression that is set must select a
value in every record; null (JMESPath's "nothing") is an error naming the file, the line
and the field, unless the mapping key is listed in ``optional``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    FiniteFloat,
    PrivateAttr,
    ValidationError,
    field_validator,
    model_validator,
)

from toolaudit.errors import ConfigError, TraceFormatError
from toolaudit.traces._jsonl import iter_json_objects
from toolaudit.traces._schema import ChatMessage, Example, ToolSection
from toolaudit.traces._source import as_text, kind_of

FORMAT = "mapped"
#: Mappings shipped with toolaudit, usable by name (``--mapping openai-chat``).
BUILTIN_MAPPINGS = ("openai-chat", "langfuse-trace")


@lru_cache(maxsize=512)
def compile_expression(expr: str) -> Any:
    """A compiled JMESPath expression; ConfigError naming the expression when invalid."""
    import jmespath
    from jmespath.exceptions import JMESPathError

    try:
        return jmespath.compile(expr)
    except JMESPathError as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ConfigError(f"invalid JMESPath expression {expr!r}: {first}") from None


class MappingEvalError(Exception):
    """A valid JMESPath expression that fails on one record (a type error in a function,
    an unknown function, a zero slice step, nesting too deep); the loaders turn it into
    a one-line error naming the mapping, the data file, the line and the expression."""

    def __init__(self, expr: str, reason: str) -> None:
        self.expr, self.reason = expr, reason
        super().__init__(f"{expr}: {reason}")


def search(expr: str, obj: Any) -> Any:
    """Evaluate a JMESPath expression on one record (None when it selects nothing).

    >>> search("tool_outputs[*].name", {"tool_outputs": [{"name": "a"}, {"name": "b"}]})
    ['a', 'b']
    >>> search("messages[?role=='tool'].content", {"messages": [{"role": "tool", "content": "x"}]})
    ['x']
    """
    from jmespath.exceptions import JMESPathError

    compiled = compile_expression(expr)
    try:
        return compiled.search(obj)
    except (JMESPathError, ValueError, TypeError, RecursionError) as exc:
        text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        raise MappingEvalError(expr, f"{type(exc).__name__}: {text}"[:300]) from None


def mapping_failure(exc: MappingEvalError, m: FieldMapping, *, path: Path, line: int) -> Exception:
    """The one-line error of a mapping expression that failed on a record."""
    origin = f"mapping {m.origin}: " if m.origin else ""
    return TraceFormatError(
        path, line, exc.expr, f"{origin}the expression fails on this record ({exc.reason})"
    )


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    @field_validator("*", mode="after")
    @classmethod
    def _compiles(cls, value: Any, info: Any) -> Any:
        # Compile every expression once at load time, so a typo is reported by key.
        if info.field_name in _NOT_EXPRESSIONS:
            return value
        for expr in value.values() if isinstance(value, dict) else [value]:
            if isinstance(expr, str):
                try:
                    compile_expression(expr)
                except ConfigError as exc:
                    raise ValueError(str(exc)) from None
        return value


_NOT_EXPRESSIONS = {
    "kind",
    "label_threshold",
    "label_positive",
    "optional",
    "message",
    "tool_call",
}


class MessageMapping(_Strict):
    """Where each part of one message lives, relative to the message (OpenAI defaults)."""

    role: str = "role"
    content: str = "content"
    tool_calls: str = "tool_calls"
    tool_call_id: str = "tool_call_id"
    name: str = "name"
    error: str | None = None


class ToolCallMapping(_Strict):
    """Where each part of one tool call lives, relative to the call (OpenAI defaults)."""

    id: str = "id"
    name: str = "function.name"
    arguments: str = "function.arguments"


class FieldMapping(_Strict):
    """Where each Example or Episode field lives in a foreign JSONL record (JMESPath).

    Examples (``kind: examples``, the default): ``label`` is required and may select a
    boolean, a 0/1 integer, a number (then ``label_threshold`` is required: label = value
    >= threshold) or a string (then ``label_positive`` lists the strings that mean 1).
    ``tools`` and ``tool_names`` select lists of the same length; without ``tool_names``
    sections are named ``tool_1``, ``tool_2``, ... ``id`` defaults to ``<file stem>:<line>``.

    Episodes (``kind: episodes``): ``task_id`` and ``messages`` are required; ``trial``,
    ``seed``, ``reward`` (a number or boolean), ``reward_components`` (an object of
    numbers), ``termination_reason`` and ``condition`` are optional expressions.
    Episodes become Examples (label = reward >= threshold) wherever Examples are needed.

    ``meta`` expressions are copied when present (null allowed); any other expression
    must select a value unless its key is listed in ``optional``.
    """

    _origin: str | None = PrivateAttr(default=None)
    kind: Literal["examples", "episodes"] = "examples"
    optional: list[str] = Field(default_factory=list)
    # Examples
    label: str | None = None
    label_threshold: FiniteFloat | None = None  # NaN or Infinity would make every label 0
    label_positive: list[str] | None = None
    id: str | None = None
    group: str | None = None
    split: str | None = None
    tools: str | None = None
    tool_names: str | None = None
    prompt: str | None = None
    answer: str | None = None
    fields: dict[str, str] = Field(default_factory=dict)
    meta: dict[str, str] = Field(default_factory=dict)
    # Both: chat messages (Examples keep role and content; Episodes keep everything)
    messages: str | None = None
    # Episodes
    task_id: str | None = None
    trial: str | None = None
    seed: str | None = None
    reward: str | None = None
    reward_components: str | None = None
    termination_reason: str | None = None
    condition: str | None = None
    message: MessageMapping = Field(default_factory=MessageMapping)
    tool_call: ToolCallMapping = Field(default_factory=ToolCallMapping)

    @model_validator(mode="after")
    def _required_for_kind(self) -> FieldMapping:
        if self.kind == "examples" and self.label is None:
            raise ValueError("an Example mapping needs 'label' (or set kind: episodes)")
        if self.kind == "episodes":
            missing = [k for k in ("task_id", "messages") if getattr(self, k) is None]
            if missing:
                raise ValueError(f"an Episode mapping needs {', '.join(map(repr, missing))}")
        return self

    @classmethod
    def from_file(cls, path: str | Path) -> FieldMapping:
        """Read a mapping from a JSON file, or a shipped one by name (``openai-chat``,
        ``langfuse-trace``); errors name the file and the field."""
        if str(path) in BUILTIN_MAPPINGS:
            ref = resources.files("toolaudit.traces") / "mappings" / f"{path}.json"
            return cls._parse(ref.read_text(encoding="utf-8"), Path(str(path)))
        path = Path(path)
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise ConfigError(
                f"cannot read mapping file {path}: {exc}; built-in mappings: "
                + ", ".join(BUILTIN_MAPPINGS)
            ) from None
        return cls._parse(text, path)

    @classmethod
    def _parse(cls, text: str, path: Path) -> FieldMapping:
        try:
            obj = json.loads(text)
        except json.JSONDecodeError as exc:
            raise TraceFormatError(path, exc.lineno, None, f"malformed JSON ({exc.msg})") from None
        except RecursionError:
            raise TraceFormatError(path, None, None, "JSON nested too deeply") from None
        if isinstance(obj, dict):
            obj = {k: v for k, v in obj.items() if not k.startswith("_")}  # "_comment" keys
        try:
            mapping = cls.model_validate(obj)
        except ValidationError as exc:
            first = exc.errors()[0]
            loc = ".".join(str(p) for p in first["loc"]) or "<mapping>"
            msg = str(first["msg"]).removeprefix("Value error, ")
            raise TraceFormatError(path, None, loc, msg[:1].lower() + msg[1:]) from None
        mapping._origin = str(path)
        return mapping

    @property
    def origin(self) -> str | None:
        """The mapping's file (or shipped name) when it was read with ``from_file``."""
        return self._origin


def select(
    obj: Any,
    m: FieldMapping,
    key: str,
    expr: str,
    *,
    path: Path,
    line: int,
    required: bool = True,
) -> Any:
    """The value ``expr`` selects in ``obj``; a TraceFormatError naming the line and the
    expression when it selects nothing and ``key`` is required (not in ``optional``)."""
    value = search(expr, obj)
    if value is None and required and key not in m.optional:
        raise TraceFormatError(
            path,
            line,
            expr,
            f"mapping '{key}' selected nothing (add {key!r} to 'optional' if it may be absent)",
        )
    return value


def load_mapped(path: str | Path, mapping: FieldMapping) -> Iterator[Example]:
    """Stream Examples from a JSONL file in a foreign layout, one line at a time
    (an Example mapping; Episode mappings are read by ``load_mapped_episodes``)."""
    path = Path(path)
    for lineno, obj in iter_json_objects(path):
        try:
            yield _example(obj, mapping, path=path, line=lineno)
        except MappingEvalError as exc:
            raise mapping_failure(exc, mapping, path=path, line=lineno) from None


def _label(value: Any, m: FieldMapping, *, path: Path, line: int) -> int:
    field = m.label or "label"
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, str) and m.label_positive is not None:
        return int(value in m.label_positive)
    if isinstance(value, int | float):
        if not math.isfinite(value):
            raise TraceFormatError(path, line, field, f"label {value} is not a finite number")
        if m.label_threshold is not None:
            return int(value >= m.label_threshold)
        if value in (0, 1):
            return int(value)
        raise TraceFormatError(
            path, line, field, f"label {value!r} is not 0/1; set label_threshold in the mapping"
        )
    raise TraceFormatError(
        path, line, field, f"cannot read a label from {type(value).__name__} {value!r}"
    )


def _as_list(value: Any) -> list[Any]:
    if value is None:
        return []
    return value if isinstance(value, list) else [value]


def _example(obj: dict[str, Any], m: FieldMapping, *, path: Path, line: int) -> Example:
    def get(key: str, expr: str | None) -> Any:
        return None if expr is None else select(obj, m, key, expr, path=path, line=line)

    tools: list[ToolSection] = []
    if m.tools:
        contents = _as_list(get("tools", m.tools))
        names = (
            _as_list(get("tool_names", m.tool_names))
            if m.tool_names
            else [f"tool_{i + 1}" for i in range(len(contents))]
        )
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
    raw = get("messages", m.messages)
    if raw is not None and not isinstance(raw, list):
        raise TraceFormatError(
            path, line, m.messages, f"expected a list of messages, got {kind_of(raw)}"
        )
    if isinstance(raw, list):
        messages = [
            ChatMessage(role=as_text(x.get("role")), content=as_text(x.get("content")))
            for x in raw
            if isinstance(x, dict)
        ]

    def opt(key: str, expr: str | None) -> str | None:
        v = get(key, expr)
        return None if v is None else as_text(v)

    def scalar(key: str, expr: str | None) -> str | None:
        v = get(key, expr)
        if isinstance(v, list | dict):
            raise TraceFormatError(
                path, line, str(expr), f"mapping '{key}' must select one value, got {kind_of(v)}"
            )
        return None if v is None else as_text(v)

    return Example(
        id=scalar("id", m.id) or f"{path.stem}:{line}",
        label=_label(get("label", m.label), m, path=path, line=line),  # type: ignore[arg-type]
        group=scalar("group", m.group) or "",
        split=scalar("split", m.split) or "",
        fields={k: as_text(get(f"fields.{k}", p)) for k, p in m.fields.items()},
        tools=tools,
        prompt=opt("prompt", m.prompt),
        messages=messages,
        answer=opt("answer", m.answer),
        meta={k: search(p, obj) for k, p in m.meta.items()},
    )

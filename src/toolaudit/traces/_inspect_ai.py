"""Inspect AI evaluation logs (``.eval`` zip archives and ``.json`` documents).

Read with ``inspect_ai.log`` (the ``[inspect]`` extra), one sample at a time: the header
is read alone, then each ``(sample id, epoch)`` that the header lists. ``.eval`` samples
are separate zip entries; ``.json`` samples are streamed from the ``samples`` array with
``ijson`` (a dependency of inspect_ai) and validated as ``EvalSample``, so no log is
loaded whole.

Each sample becomes one Episode:

* ``task_id`` is the sample id, ``trial`` the epoch;
* messages are the agent's conversation: ``sample.messages``, or, where a harness keeps
  the agent's side in the sample's store (inspect_evals' tau2 keeps it under
  ``StoredAgentState:<instance>:messages`` while ``sample.messages`` holds the user
  simulator's side), the store's chat-message list with the most tool calls, when it has
  more than ``sample.messages``; ``source.conversation`` names which
  (``messages`` or ``store:<key>``);
* messages keep their roles; assistant tool calls become ``ToolCall(id, name=function,
  arguments)``; tool messages keep ``tool_call_id`` and the tool's name, and a tool error
  sets ``error`` (the error text is the content when the tool returned nothing else);
* ``reward`` is the first scorer's value converted by inspect's own ``value_to_float``
  (``"C"`` → 1, ``"I"`` → 0, ``"P"`` → 0.5, booleans, numbers); every scalar value of
  every scorer is a reward component (``scorer`` or ``scorer.key`` for dict values); a
  sample without scores has no reward;
* ``termination_reason`` is ``error`` when the sample ended in an error, ``<type>_limit``
  when a limit stopped it (``message_limit``, ``token_limit``, ...), else None.
"""

from __future__ import annotations

import logging
import re
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from toolaudit.errors import MissingDependencyError, TraceFormatError
from toolaudit.traces._files import open_regular
from toolaudit.traces._numbers import check_score
from toolaudit.traces._schema import Episode, Message, ToolCall

if TYPE_CHECKING:  # pragma: no cover
    from inspect_ai.log import EvalLog, EvalSample

logger = logging.getLogger(__name__)

FORMAT = "inspect"
# Inspect writes EvalLog with "version" then "status" first; .eval files are zip archives.
_JSON_HEAD = re.compile(rb'^\s*\{\s*"version"\s*:\s*\d+\s*,\s*"status"\s*:\s*"')
_ZIP_MAGIC = b"PK\x03\x04"
_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_ROLES = ("system", "user", "assistant", "tool")


def looks_like_inspect(path: str | Path) -> bool:
    """Whether ``path`` is an Inspect log: a ``.eval`` zip, or a ``.json`` file that
    starts like Inspect's ``EvalLog`` (``{"version": N, "status": ...``). Reads 256 bytes."""
    path = Path(path)
    if not path.is_file():
        return False
    with open_regular(path) as fh:
        head = fh.read(256)
    if path.suffix == ".eval":
        return True  # a truncated or corrupt archive is reported when read, naming the file
    return bool(_JSON_HEAD.match(head)) or (head.startswith(_ZIP_MAGIC) and _has_header(path))


def _has_header(path: Path) -> bool:
    try:
        with zipfile.ZipFile(path) as zf:
            names = set(zf.namelist())
    except (zipfile.BadZipFile, OSError):
        return False
    return "header.json" in names or "_journal/start.json" in names


def _require_inspect() -> None:
    try:
        import inspect_ai  # noqa: F401
    except ModuleNotFoundError:
        raise MissingDependencyError("inspect-ai", "inspect") from None


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}".rstrip(": ")


def _read_header(path: Path) -> EvalLog:
    from inspect_ai.log import read_eval_log

    try:
        return read_eval_log(str(path), header_only=True)
    except Exception as exc:  # inspect raises many kinds for a corrupt file
        if _is_json(path):
            problem = f"cannot read the Inspect log header ({_one_line(exc)})"
        else:
            problem = (
                "truncated or corrupt .eval archive: its zip directory or header.json "
                f"cannot be read ({_one_line(exc)})"
            )
        raise TraceFormatError(path, None, None, problem) from None


def load_inspect(path: str | Path) -> Iterator[Episode]:
    """Yield one Episode per sample and epoch of an Inspect log, one sample in memory.

    Example:
        >>> for ep in load_inspect("logs/2025-01-01T00-00-00_task_abc.eval"):  # doctest: +SKIP
        ...     print(ep.task_id, ep.trial, ep.reward)
    """
    _require_inspect()
    path = Path(path)
    header = _read_header(path)
    source = {
        "format": FORMAT,
        "file": str(path),
        "task": header.eval.task,
        "model": header.eval.model,
        "status": header.status,
        "eval_id": header.eval.eval_id,
    }
    if header.status != "success":
        logger.warning(
            "%s: Inspect log status is %r; reading the samples it holds", path, header.status
        )
    samples = _iter_json_samples(path) if _is_json(path) else _iter_eval_samples(path, header)
    for sample in samples:
        yield sample_episode(sample, path=path, source=source)


def _is_json(path: Path) -> bool:
    with open_regular(path) as fh:
        return bool(_JSON_HEAD.match(fh.read(256)))


def _record(sample_id: Any, epoch: Any) -> str:
    return f"samples[id={sample_id}, epoch={epoch}]"


def _validation_field(exc: Any, record: str) -> tuple[str, str]:
    first = exc.errors()[0]
    # Keep keys and indices; drop pydantic's union-member tags such as function-wrap[...].
    loc = ".".join(str(p) for p in first["loc"] if isinstance(p, int) or _KEY.match(str(p)))
    return (f"{record}.{loc}" if loc else record), str(first["msg"]).lower()


def _iter_eval_samples(path: Path, header: EvalLog) -> Iterator[EvalSample]:
    from inspect_ai.log import read_eval_log_sample
    from pydantic import ValidationError

    ids = header.eval.dataset.sample_ids
    if ids is None:
        raise TraceFormatError(
            path,
            None,
            "eval.dataset.sample_ids",
            "the header does not list its samples (re-write the log with inspect to add them)",
        )
    epochs = header.eval.config.epochs or 1
    missing = 0
    for sample_id in ids:
        for epoch in range(1, epochs + 1):
            record = _record(sample_id, epoch)
            try:
                yield read_eval_log_sample(
                    str(path), id=sample_id, epoch=epoch, resolve_attachments=True
                )
            except IndexError:
                missing += 1
            except ValidationError as exc:
                where, msg = _validation_field(exc, record)
                raise TraceFormatError(path, None, where, msg) from None
            except Exception as exc:
                entry = f"samples/{sample_id}_epoch_{epoch}.json"
                raise TraceFormatError(
                    path, None, record, f"cannot read zip entry {entry} ({_one_line(exc)})"
                ) from None
    if missing:
        logger.warning(
            "%s: %d sample(s) listed in the header are not in the log (status %r)",
            path,
            missing,
            header.status,
        )


def _iter_json_samples(path: Path) -> Iterator[EvalSample]:
    import ijson  # type: ignore[import-untyped]
    from inspect_ai.log import EvalSample
    from pydantic import ValidationError

    with open_regular(path) as fh:
        items = ijson.items(fh, "samples.item", use_float=True)
        index = 0
        while True:
            try:
                raw = next(items)
            except StopIteration:
                if index == 0:
                    _check_samples_is_a_list(path)
                return
            except Exception as exc:  # ijson.JSONError, IncompleteJSONError, ...
                # JSON has no NaN / Infinity, but Python (and so inspect) writes them and
                # ijson cannot stream them: then read the log whole, as inspect does.
                yield from _rest_of_json_log(path, index, exc)
                return
            record = _record(raw.get("id"), raw.get("epoch")) if isinstance(raw, dict) else None
            try:
                yield EvalSample.model_validate(raw)
            except ValidationError as exc:
                where, msg = _validation_field(exc, record or f"samples[{index}]")
                raise TraceFormatError(path, None, where, msg) from None
            index += 1


_JSON_KINDS = {"start_map": "an object", "string": "a string", "number": "a number",
               "boolean": "a boolean", "null": "null"}  # fmt: skip


def _check_samples_is_a_list(path: Path) -> None:
    """A log that streamed no sample: refuse a top-level ``samples`` that is not a list
    (an object would otherwise read as an empty log); an absent one is a log without
    samples."""
    import ijson

    with open_regular(path) as fh:
        try:
            for prefix, event, _ in ijson.parse(fh, use_float=True):
                if prefix == "samples" and event != "map_key":
                    if event == "start_array":
                        return
                    raise TraceFormatError(
                        path,
                        None,
                        "samples",
                        f"expected a list, got {_JSON_KINDS.get(event, event)}",
                    )
        except ijson.JSONError:
            return  # malformed JSON is reported where the samples are read


def _rest_of_json_log(path: Path, index: int, exc: Exception) -> Iterator[EvalSample]:
    from inspect_ai.log import read_eval_log

    try:
        log = read_eval_log(str(path), resolve_attachments=True)
    except Exception:
        raise TraceFormatError(
            path, None, f"samples[{index}]", f"malformed JSON ({_one_line(exc)})"
        ) from None
    logger.warning(
        "%s: samples[%d] cannot be streamed (%s); read the log whole instead",
        path,
        index,
        _one_line(exc),
    )
    yield from (log.samples or [])[index:]


def sample_episode(
    sample: EvalSample,
    *,
    path: Path,
    source: dict[str, Any],
    conversation_key: str | None = None,
) -> Episode:
    """One Inspect ``EvalSample`` as an Episode (see the module docstring for the rules);
    ``conversation_key`` names the store entry holding the agent's conversation when the
    caller knows it (a harness that built the task), instead of the rule's choice."""
    record = _record(sample.id, sample.epoch)
    reward, components = _reward(sample, path=path, record=record)
    termination: str | None = None
    if sample.error is not None:
        termination = "error"
    elif sample.limit is not None:
        termination = f"{sample.limit.type}_limit"
    conversation, messages = agent_conversation(sample, key=conversation_key)
    return Episode(
        task_id=str(sample.id),
        trial=int(sample.epoch),
        messages=_messages(messages, path=path, record=record),
        reward=reward,
        reward_components=components or None,
        termination_reason=termination,
        source={
            **source,
            "sample_id": sample.id,
            "epoch": sample.epoch,
            "uuid": sample.uuid,
            "episode_id": sample.uuid or f"{path.stem}:{sample.id}:{sample.epoch}",
            "error": _one_line_text(sample.error.message) if sample.error else None,
            "conversation": conversation,
        },
    )


def _n_calls(messages: list[Any]) -> int:
    return sum(len(getattr(m, "tool_calls", None) or []) for m in messages)


def agent_conversation(sample: EvalSample, *, key: str | None = None) -> tuple[str, list[Any]]:
    """Where the agent's conversation is kept: ``("messages", sample.messages)``, or
    ``("store:KEY", messages)`` for a store entry holding a chat-message list with more
    tool calls than ``sample.messages`` (the one with the most; ties by key). With
    ``key``, that store entry when it holds a chat-message list."""
    from inspect_ai.model import ChatMessage
    from pydantic import TypeAdapter, ValidationError

    best: tuple[str, list[Any]] = ("messages", list(sample.messages))
    most = _n_calls(best[1])
    adapter: TypeAdapter[list[ChatMessage]] = TypeAdapter(list[ChatMessage])
    if key is not None and isinstance((sample.store or {}).get(key), list):
        try:
            return f"store:{key}", list(adapter.validate_python(sample.store[key]))
        except ValidationError:
            pass  # not chat messages: the rule below decides
    for key in sorted(sample.store or {}):
        value = sample.store[key]
        if not (isinstance(value, list) and value and isinstance(value[0], dict)):
            continue
        if "role" not in value[0] or not any(
            isinstance(v, dict) and v.get("tool_calls") for v in value
        ):
            continue
        try:
            messages = adapter.validate_python(value)
        except ValidationError:
            continue  # a list that only looks like messages is not the conversation
        n = _n_calls(messages)
        if n > most:
            best, most = (f"store:{key}", list(messages)), n
    return best


def _one_line_text(text: str) -> str:
    lines = text.strip().splitlines()
    return lines[0] if lines else ""


def _reward(
    sample: EvalSample, *, path: Path, record: str
) -> tuple[float | None, dict[str, float]]:
    """The first scorer's value and every scalar component; a value that converts to a
    non-finite number (NaN, ±inf) is refused, naming the record and the scorer."""
    from inspect_ai.scorer import value_to_float

    to_float = value_to_float()
    reward: float | None = None
    components: dict[str, float] = {}
    for i, (name, score) in enumerate((sample.scores or {}).items()):
        value = score.value
        if isinstance(value, dict):
            for key, v in value.items():
                if isinstance(v, str | int | float | bool):
                    components[f"{name}.{key}"] = to_float(v)
            continue
        if isinstance(value, list):
            continue
        components[name] = to_float(value)
        if i == 0:
            reward = components[name]
    for name, v in components.items():
        check_score(v, path=path, line=None, field=f"{record}.scores.{name}")
    return reward, components


def _messages(messages: list[Any], *, path: Path, record: str) -> list[Message]:
    from inspect_ai.model import ChatMessageAssistant, ChatMessageTool

    out: list[Message] = []
    for j, msg in enumerate(messages):
        role = msg.role
        if role not in _ROLES:
            raise TraceFormatError(
                path, None, f"{record}.messages[{j}].role", f"unknown role {role!r}"
            )
        text = msg.text
        if isinstance(msg, ChatMessageTool):
            error = msg.error
            out.append(
                Message(
                    role="tool",
                    content=text or (error.message if error is not None else ""),
                    tool_call_id=msg.tool_call_id,
                    name=msg.function,
                    error=error is not None,
                )
            )
            continue
        calls = None
        if isinstance(msg, ChatMessageAssistant) and msg.tool_calls:
            calls = [
                ToolCall(id=c.id, name=c.function, arguments=dict(c.arguments or {}))
                for c in msg.tool_calls
            ]
        out.append(Message(role=role, content=text, tool_calls=calls))
    return out

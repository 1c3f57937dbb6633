"""Resumable run folders, one mechanism for faults, probe and redaction.

A long run writes into a folder that a later run with the same options continues:

* ``run_config.json`` records the options that change the results. A later run into the
  same folder with other options is refused (:class:`~toolaudit.errors.ConfigError`)
  naming the first differing entry, before anything is written; the record is written
  once the inputs and the model have loaded, so a run that fails on a typo does not lock
  its folder.
* Records are appended one JSON line at a time; an interrupted append leaves a
  truncated last line, which :func:`complete_lines` drops (with a warning) so the run
  can continue. A complete last record that only lacks its newline is kept, and a
  record repeated in the file is refused naming both lines (:func:`refuse_duplicate`).
* :func:`exclusive` holds a lock on the folder while a run writes, so a second run into
  the same folder is refused instead of interleaving its records with the first's.
* ``run_log.jsonl`` gets one line per invocation (counters that differ between an
  interrupted-and-resumed run and an uninterrupted one, and so stay out of results).

Example:
    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> check_run_config(d, {"model": "embedded", "scoring": "options"})  # nothing recorded
    >>> _ = write_run_config(d, {"model": "embedded", "scoring": "options"})
    >>> check_run_config(d, {"model": "embedded", "scoring": "yesno"})  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    toolaudit.errors.ConfigError: ... made with scoring="options", but this run has scoring="yesno"; ...
"""

from __future__ import annotations

import json
import logging
import os
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Literal

from toolaudit.errors import ConfigError, TraceFormatError

logger = logging.getLogger(__name__)

RUN_CONFIG = "run_config.json"
LOCK_FILE = ".toolaudit.lock"


def _normal(config: Mapping[str, Any]) -> dict[str, Any]:
    # Round-trip through JSON so tuples and lists, or int and float keys, compare equal.
    normal: dict[str, Any] = json.loads(json.dumps(dict(config), sort_keys=True, default=str))
    return normal


def portable(config: Mapping[str, Any], folder: str | Path) -> dict[str, Any]:
    """``config`` with every top-level absolute path made relative to ``folder`` (the
    results' own folder), so that committed results name no machine's layout and a
    resume or a reader elsewhere sees the same options; a list's absolute paths likewise,
    one by one. Relative paths stay as given.

    >>> portable({"data": "/w/repo/build/x.jsonl", "seed": 0, "n": "/"}, "/w/repo/results/r")
    {'data': '../../build/x.jsonl', 'seed': 0, 'n': '/'}
    >>> portable({"traces": ["/w/a.json", "b.json"]}, "/w/r")
    {'traces': ['../a.json', 'b.json']}
    """
    base = os.path.abspath(folder)

    def rel(v: Any) -> Any:
        if isinstance(v, str) and len(v) > 1 and os.path.isabs(v):
            return os.path.relpath(v, base)
        return v

    return {k: [rel(x) for x in v] if isinstance(v, list) else rel(v) for k, v in config.items()}


def read_run_config(folder: str | Path, *, name: str = RUN_CONFIG) -> dict[str, Any] | None:
    """The options recorded in ``folder/name``; None when nothing is recorded.

    Raises TraceFormatError naming the file when it is not a JSON object."""
    path = Path(folder) / name
    if not path.is_file():
        return None
    try:
        recorded = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise TraceFormatError(
            path, None, None, f"unreadable run record ({exc}); delete it or use another --out"
        ) from None
    if not isinstance(recorded, dict):
        raise TraceFormatError(path, None, None, "run record is not a JSON object")
    return recorded


def check_run_config(
    folder: str | Path,
    config: Mapping[str, Any],
    *,
    name: str = RUN_CONFIG,
    recorded: Mapping[str, Any] | None = None,
    options: Mapping[str, str] | None = None,
) -> None:
    """Raise ConfigError naming the first entry whose value differs from the one recorded
    in ``folder/name`` (or in ``recorded``, when given); nothing happens when nothing is
    recorded. ``options`` maps keys to the command-line spelling used in the message
    (``{"n_seeds": "--seeds"}``) and, when given, limits the check to those keys."""
    folder = Path(folder)
    if recorded is None:
        recorded = read_run_config(folder, name=name)
        if recorded is None:
            return
    old, new = _normal(portable(recorded, folder)), _normal(portable(config, folder))
    if options is not None:
        old = {k: old.get(k) for k in options if k in old or k in new}
        new = {k: new.get(k) for k in old}
    diff = first_difference(old, new)
    if diff is None:
        return
    key, then, now = diff
    head, dot, rest = key.partition(".")
    if options is not None and head in options:
        key = options[head] + dot + rest
    raise ConfigError(
        f"{folder} holds a run made with {key}={short_value(then)}, but this run has "
        f"{key}={short_value(now)}; runs of other options must not mix: use another --out, "
        "or delete that folder to start over"
    )


def short_value(value: Any, width: int = 30) -> str:
    """A recorded option's value for a one-line message: JSON, cut to ``width``
    characters with its size said when longer (a list of ten class records is not
    printed whole; a list of named records is shown by its names).

    >>> short_value("pdb_id"), short_value([1, 2])
    ('"pdb_id"', '[1, 2]')
    >>> short_value([{"name": "pdb_id", "pattern": "[0-9][A-Z0-9]{3}"}])
    '["pdb_id"]'
    >>> short_value([{"name": f"class_{i}", "pattern": "[A-Z]+"} for i in range(10)])
    '["class_0", "class_1", "cla…] (10 items)'
    """
    if (
        isinstance(value, list)
        and value
        and all(isinstance(v, dict) and isinstance(v.get("name"), str) for v in value)
    ):
        value = [v["name"] for v in value]  # records by their names
    text = json.dumps(value, sort_keys=True, default=str, ensure_ascii=False)
    if len(text) <= width:
        return text
    size = ""
    if isinstance(value, list | dict):
        size = f" ({len(value)} item{'' if len(value) == 1 else 's'})"
    return text[: width - 3] + "…" + text[-1] * isinstance(value, list | dict) + size


def first_difference(a: Any, b: Any, where: str = "") -> tuple[str, Any, Any] | None:
    """The path and the two values of the first leaf where ``a`` and ``b`` differ, so a
    refusal names ``classes[2].description`` rather than printing two whole lists.

    >>> first_difference({"k": [1, {"x": 2}]}, {"k": [1, {"x": 3}]})
    ('k[1].x', 2, 3)
    >>> first_difference({"a": 1}, {"a": 1}) is None
    True
    """
    if isinstance(a, dict) and isinstance(b, dict):
        for key in sorted(set(a) | set(b)):
            at = f"{where}.{key}" if where else str(key)
            if key not in a or key not in b:
                return at, a.get(key), b.get(key)
            found = first_difference(a[key], b[key], at)
            if found is not None:
                return found
        return None
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            found = first_difference(x, y, f"{where}[{i}]")
            if found is not None:
                return found
        return None
    return None if a == b else (where, a, b)


def write_run_config(
    folder: str | Path, config: Mapping[str, Any], *, name: str = RUN_CONFIG
) -> Path:
    """Record ``config`` in ``folder/name`` (sorted keys, so the same options give the
    same bytes; absolute paths relative to ``folder``, :func:`portable`), written to a
    temporary name and renamed: never half a file."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    config = portable(config, folder)
    text = json.dumps(_normal(config), indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    tmp = temp_beside(path)
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)
    return path


def temp_beside(path: Path) -> Path:
    """A new, uniquely named empty file next to ``path`` (``.NAME.XXXX.partial``) with
    the permissions a plain new file would get, to write and then ``os.replace`` onto
    ``path``: a reader never sees half a file, and two writers never share the name."""
    fd, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".partial", dir=path.parent)
    os.close(fd)
    mask = os.umask(0)
    os.umask(mask)
    os.chmod(name, 0o666 & ~mask)
    return Path(name)


def append_run_log(
    folder: str | Path, entry: Mapping[str, Any], *, name: str = "run_log.jsonl"
) -> Path:
    """Append one line about this invocation to ``folder/name``."""
    path = Path(folder) / name
    with path.open("a", encoding="utf-8") as fh:
        fh.write(json.dumps(dict(entry), sort_keys=True) + "\n")
    return path


def complete_lines(
    path: Path, *, truncated: Literal["drop", "skip", "refuse"] = "drop"
) -> list[tuple[int, str]]:
    """``(line number, text)`` of every non-blank complete line of a JSONL record file
    (none when it does not exist). Raises TraceFormatError naming the line when the file
    is not UTF-8.

    A final record that lacks only its newline is complete: it is kept, and with
    ``truncated="drop"`` its newline is written, so the next append starts a line of its
    own. A final line that is not valid JSON (an interrupted append) is, by
    ``truncated``: ``"drop"``, dropped from the file with a warning (a run about to
    resume); ``"skip"``, left out without changing the file (a check before anything is
    written); ``"refuse"``, refused naming the line (a reader of a finished folder).
    """
    if not path.exists():
        return []
    raw = path.read_bytes()
    if raw and not raw.endswith(b"\n"):
        cut = raw.rfind(b"\n") + 1
        if _is_json(raw[cut:]):
            if truncated == "drop":
                with path.open("ab") as fh:
                    fh.write(b"\n")
        elif truncated == "refuse":
            raise TraceFormatError(
                path, raw[:cut].count(b"\n") + 1, None,
                "truncated final record (an interrupted run): resume the run with the "
                "same options, which drops it, before reading the folder",
            )  # fmt: skip
        else:
            if truncated == "drop":
                logger.warning("%s: dropping a truncated final record (interrupted run)", path)
                path.write_bytes(raw[:cut])
            raw = raw[:cut]
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        bad_line = raw[: exc.start].count(b"\n") + 1
        raise TraceFormatError(path, bad_line, None, "not valid UTF-8") from None
    return [(i, line) for i, line in enumerate(text.splitlines(), start=1) if line.strip()]


def _is_json(raw: bytes) -> bool:
    try:
        json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return False
    return True


def refuse_duplicate(seen: dict[str, int], key: str, *, path: Path, line: int, field: str) -> None:
    """Record that ``line`` holds the record ``key``; a second line with the same key is
    refused naming both lines (a record appended twice, or another study's record for
    the same unit, must not silently replace the first)."""
    first = seen.setdefault(key, line)
    if first != line:
        raise TraceFormatError(
            path, line, field,
            f"{key!r} repeats the record of line {first}; a study holds each record once "
            "(remove the line that does not belong, or start over in another --out)",
        )  # fmt: skip


def options_digest(options: Mapping[str, Any]) -> str:
    """A 16-hex-digit digest of a run's options, stamped on each record so that a record
    of another study in the same file is recognised."""
    import hashlib

    text = json.dumps(_normal(options), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def check_writable(folder: Path, *names: str) -> None:
    """ConfigError naming the folder when nothing can be written in it, or a file when
    one of ``names`` in it cannot be replaced, before any work. The folder is probed by
    creating (and removing) a temporary folder, since permission bits do not tell a
    read-only file system."""
    try:
        Path(tempfile.mkdtemp(prefix=".toolaudit-probe-", dir=folder)).rmdir()
    except OSError as exc:
        raise ConfigError(
            f"{folder}: nothing can be written in this folder ({exc.strerror or exc}); "
            "copy it somewhere writable first"
        ) from None
    for name in names:
        target = folder / name
        if target.exists() and not os.access(target, os.W_OK):
            raise ConfigError(f"{target}: cannot be written (read-only file)")


@contextmanager
def exclusive(folder: str | Path) -> Iterator[None]:
    """Hold an exclusive lock on a run folder while a run writes into it: a second run
    into the same folder is refused at once (ConfigError) instead of appending its records
    beside the first's. The lock is released when the process ends, however it ends."""
    import fcntl

    folder = Path(folder)
    created = not folder.exists()
    folder.mkdir(parents=True, exist_ok=True)
    lock = folder / LOCK_FILE
    with lock.open("a") as fh:
        try:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise ConfigError(
                f"{folder}: another toolaudit run is writing into this folder; wait for it "
                "to finish (or stop it), or use another --out"
            ) from None
        try:
            yield
        except BaseException:
            if created and [p.name for p in folder.iterdir()] == [LOCK_FILE]:
                lock.unlink()  # a run refused before its first record leaves no folder
                folder.rmdir()
            raise
        finally:
            fcntl.flock(fh.fileno(), fcntl.LOCK_UN)


__all__ = [
    "LOCK_FILE",
    "RUN_CONFIG",
    "append_run_log",
    "check_writable",
    "check_run_config",
    "complete_lines",
    "exclusive",
    "first_difference",
    "options_digest",
    "read_run_config",
    "refuse_duplicate",
    "temp_beside",
    "write_run_config",
]

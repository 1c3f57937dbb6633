"""Runs that refuse to mix: a resumable output folder records the options that change
its results, and a later run into the same folder must use the same options.

The check reads only; it runs before anything is written, so a refused run leaves the
folder as it was. The record is written once the inputs and the model have loaded, so a
run that fails on a typo does not lock its folder.

Example:
    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> check_run_config(d, {"model": "embedded", "scoring": "options"})  # nothing recorded
    >>> _ = write_run_config(d, {"model": "embedded", "scoring": "options"})
    >>> check_run_config(d, {"model": "embedded", "scoring": "yesno"})  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    toolaudit.errors.ConfigError: ... made with scoring='options', but this run has scoring='yesno'; ...
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from toolaudit.errors import ConfigError, TraceFormatError

RUN_CONFIG = "run_config.json"


def _normal(config: dict[str, Any]) -> dict[str, Any]:
    # Round-trip through JSON so tuples and lists, or int and float keys, compare equal.
    normal: dict[str, Any] = json.loads(json.dumps(config, sort_keys=True, default=str))
    return normal


def check_run_config(folder: Path, config: dict[str, Any], *, name: str = RUN_CONFIG) -> None:
    """Raise ConfigError naming the first option whose value differs from the one
    recorded in ``folder/name`` (nothing happens when nothing is recorded yet)."""
    path = folder / name
    if not path.is_file():
        return
    try:
        recorded = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise TraceFormatError(
            path, None, None, f"unreadable run record ({exc}); delete it or use another --out"
        ) from None
    if not isinstance(recorded, dict):
        raise TraceFormatError(path, None, None, "run record is not a JSON object")
    diff = _first_difference(recorded, _normal(config))
    if diff is not None:
        key, then, now = diff
        raise ConfigError(
            f"{folder} holds a run made with {key}={then!r}, but this run has {key}={now!r}; "
            f"results of different options must not mix: use another --out (or delete "
            f"{path} to start over)"
        )


def _first_difference(a: Any, b: Any, where: str = "") -> tuple[str, Any, Any] | None:
    """The path and the two values of the first leaf where ``a`` and ``b`` differ, so a
    refusal names ``classes[2].description`` rather than printing two whole lists.

    >>> _first_difference({"k": [1, {"x": 2}]}, {"k": [1, {"x": 3}]})
    ('k[1].x', 2, 3)
    >>> _first_difference({"a": 1}, {"a": 1}) is None
    True
    """
    if isinstance(a, dict) and isinstance(b, dict):
        for key in sorted(set(a) | set(b)):
            at = f"{where}.{key}" if where else str(key)
            if key not in a or key not in b:
                return at, a.get(key), b.get(key)
            found = _first_difference(a[key], b[key], at)
            if found is not None:
                return found
        return None
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            found = _first_difference(x, y, f"{where}[{i}]")
            if found is not None:
                return found
        return None
    return None if a == b else (where, a, b)


def write_run_config(folder: Path, config: dict[str, Any], *, name: str = RUN_CONFIG) -> Path:
    """Record ``config`` in ``folder/name`` (stable formatting, so reruns are identical)."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    text = json.dumps(_normal(config), indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    from toolaudit.cli._common import temp_beside

    tmp = temp_beside(path)  # a unique name: no two writers share it
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)
    return path


def append_run_log(folder: Path, entry: dict[str, Any], *, name: str = "run_log.jsonl") -> Path:
    """Append one line about this invocation (counters that differ between an
    interrupted-and-resumed run and an uninterrupted one, and so stay out of results)."""
    path = folder / name
    with path.open("a", encoding="utf-8") as fh:
        fh.write(json.dumps(entry, sort_keys=True) + "\n")
    return path

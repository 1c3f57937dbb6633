"""The format registry, format auto-detection, and the two entry points
``load_episodes`` and ``load_examples``.

Detection reads as little as it can: a folder with ``tasks.json`` is a tau2 domain; a
folder (or its ``results.json``) with ``results.json`` and ``simulations/`` is tau2's
directory layout; a file whose first line is a complete JSON object is JSONL (Examples, Episodes, or a
foreign layout when a mapping is given); anything else is parsed as one JSON document
(tau2-bench results or a tau-bench trajectory list).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, get_args

from toolaudit.errors import ConfigError, TraceFormatError
from toolaudit.traces._convert import DEFAULT_THRESHOLD, ConversionCounts, episodes_to_examples
from toolaudit.traces._domain import FORMAT as DOMAIN_FORMAT
from toolaudit.traces._domain import is_domain_dir
from toolaudit.traces._files import input_kind
from toolaudit.traces._inspect_ai import load_inspect, looks_like_inspect
from toolaudit.traces._jsonl import iter_json_objects, read_jsonl, validate_record
from toolaudit.traces._mapping import FieldMapping, load_mapped
from toolaudit.traces._mapping_episodes import load_mapped_episodes
from toolaudit.traces._numbers import check_reward_scores, parse_int
from toolaudit.traces._schema import Episode, Example
from toolaudit.traces._source import first_record_line, read_json_document
from toolaudit.traces._tau2 import load_tau2, looks_like_tau2
from toolaudit.traces._tau2_dir import (
    SIMULATIONS_DIR,
    is_tau2_dir,
    load_tau2_dir,
    looks_like_tau2_meta,
)
from toolaudit.traces._taubench import load_taubench, looks_like_taubench

logger = logging.getLogger(__name__)

TraceFormat = Literal[
    "tau2", "tau2-dir", "tau-bench", "inspect", "tau2-domain", "episodes", "examples", "mapped"
]
FORMAT_NAMES: tuple[str, ...] = get_args(TraceFormat)
RecordKind = Literal["episodes", "examples", "domain"]


def _load_episode_jsonl(path: Path) -> Iterator[Episode]:
    for line, obj in iter_json_objects(path):
        ep = validate_record(Episode, obj, path, line)
        check_reward_scores(ep.reward, ep.reward_components, path=path, line=line)
        yield ep


@dataclass(frozen=True, slots=True)
class FormatSpec:
    """One supported input format: what it holds and how to stream its episodes."""

    name: str
    kind: RecordKind
    description: str
    episodes: Callable[[Path], Iterator[Episode]] | None = None


FORMATS: dict[str, FormatSpec] = {
    s.name: s
    for s in (
        FormatSpec("tau2", "episodes", "tau2-bench results file (JSON)", load_tau2),
        FormatSpec(
            "tau2-dir",
            "episodes",
            "tau2-bench results folder (results.json + simulations/*.json)",
            load_tau2_dir,
        ),
        FormatSpec("tau-bench", "episodes", "tau-bench v1 trajectory list (JSON)", load_taubench),
        FormatSpec(
            "inspect", "episodes", "Inspect AI log (.eval or .json; [inspect] extra)", load_inspect
        ),
        FormatSpec(DOMAIN_FORMAT, "domain", "tau2 domain folder (tasks.json, db.json, policy.md)"),
        FormatSpec("episodes", "episodes", "toolaudit Episode JSONL", _load_episode_jsonl),
        FormatSpec("examples", "examples", "toolaudit Example JSONL"),
        FormatSpec(
            "mapped",
            "examples",
            "JSONL in another layout, read with a FieldMapping (Examples or Episodes)",
        ),
    )
}


def _check_format(format: str) -> None:
    if format != "auto" and format not in FORMATS:
        raise ConfigError.invalid("format", ("auto", *FORMAT_NAMES), format)


def detect_format(path: str | Path, *, mapping: FieldMapping | None = None) -> TraceFormat:
    """Name the format of ``path`` (see ``FORMATS``); TraceFormatError when none fits.

    Example:
        >>> detect_format("../shared/data/tau2/domains/retail")  # doctest: +SKIP
        'tau2-domain'
    """
    path = Path(path)
    if input_kind(path) == "dir":  # a link loop, a FIFO or a device is refused here
        if is_domain_dir(path):
            return "tau2-domain"
        if is_tau2_dir(path):
            return "tau2-dir"
        raise TraceFormatError(
            path,
            None,
            None,
            "a folder, but neither a tau2 domain folder (tasks.json) nor a tau2 results "
            "folder (results.json + simulations/)",
        )
    if mapping is None and looks_like_inspect(path):
        return "inspect"
    lineno, text = first_record_line(path)
    try:
        first = json.loads(text, parse_int=parse_int)
    except ValueError:  # malformed JSON: not JSONL; read whole below, which names the line
        first = None
    except RecursionError:
        raise TraceFormatError(path, lineno, None, "JSON nested too deeply") from None
    if isinstance(first, dict) and looks_like_tau2_meta(first) and mapping is None:
        return _tau2_meta_format(path)
    if isinstance(first, dict) and not looks_like_tau2(first):
        if mapping is not None:
            return "mapped"
        return _jsonl_kind(first, path=path, line=lineno)
    if mapping is not None:
        raise TraceFormatError(
            path, lineno, None, "a field mapping needs JSONL (one object a line)"
        )
    stripped = text.lstrip()
    if stripped[:1] not in ("{", "["):
        raise TraceFormatError(
            path,
            lineno,
            None,
            f"unrecognised format: not JSON or JSONL (starts with {stripped.strip()[:12]!r}); "
            f"expected one of {', '.join(FORMAT_NAMES)}",
        )
    doc = read_json_document(path)
    if looks_like_tau2(doc):
        return "tau2"
    if looks_like_taubench(doc):
        return "tau-bench"
    if looks_like_tau2_meta(doc):
        return _tau2_meta_format(path)
    raise TraceFormatError(
        path,
        None,
        "simulations" if isinstance(doc, dict) else "[0].traj",
        "unrecognised JSON: neither a tau2-bench results file (object with 'simulations') "
        "nor a tau-bench trajectory list (records with 'task_id' and 'traj')",
    )


def _tau2_meta_format(path: Path) -> TraceFormat:
    if is_tau2_dir(path):
        return "tau2-dir"
    raise TraceFormatError(
        path,
        None,
        "simulations",
        f"tau2 results metadata without simulations: no {SIMULATIONS_DIR}/ folder beside it "
        "(tau2's directory layout) and no 'simulations' list inside it",
    )


def _jsonl_kind(first: dict, *, path: Path, line: int) -> TraceFormat:
    if "label" in first and ("tools" in first or "group" in first):
        return "examples"
    if "task_id" in first and "messages" in first:
        return "episodes"
    keys = ", ".join(sorted(first)[:8])
    raise TraceFormatError(
        path,
        line,
        "label" if "tools" in first else "task_id",
        f"unrecognised JSONL record (keys: {keys}); expected an Example (id, label, group, "
        "tools) or an Episode (task_id, messages), or pass a field mapping",
    )


def resolve_format(
    path: str | Path, format: str = "auto", *, mapping: FieldMapping | None = None
) -> TraceFormat:
    """``format`` itself when given explicitly (validated), else the detected format."""
    _check_format(format)
    if format == "auto":
        return detect_format(path, mapping=mapping)
    if format == "mapped" and mapping is None:
        raise ConfigError("format='mapped' needs a field mapping (--mapping FILE)")
    return format  # type: ignore[return-value]


def load_episodes(
    path: str | Path, *, format: str = "auto", mapping: FieldMapping | None = None
) -> Iterator[Episode]:
    """Stream the Episodes of any episode format (tau2 file or folder, tau-bench, Inspect
    AI logs, Episode JSONL, or JSONL read through a ``kind: episodes`` mapping).

    Example:
        >>> for ep in load_episodes("results.json"):  # doctest: +SKIP
        ...     print(ep.task_id, ep.reward, len(ep.tool_calls()))
    """
    path = Path(path)
    fmt = resolve_format(path, format, mapping=mapping)
    if fmt == "mapped" and mapping is not None:
        if mapping.kind != "episodes":
            raise TraceFormatError(
                path,
                None,
                None,
                "the field mapping produces Examples, not agent episodes "
                "(an Episode mapping has kind 'episodes', task_id and messages)",
            )
        return load_mapped_episodes(path, mapping)
    spec = FORMATS[fmt]
    if spec.episodes is None:
        raise TraceFormatError(
            path, None, None, f"holds {spec.description}, not agent episodes (format {fmt!r})"
        )
    return spec.episodes(path)


def load_examples(
    path: str | Path,
    *,
    format: str = "auto",
    mapping: FieldMapping | None = None,
    threshold: float = DEFAULT_THRESHOLD,
    counts: ConversionCounts | None = None,
) -> Iterator[Example]:
    """Stream Examples from any supported file.

    Example JSONL is read as is; a mapping reads a foreign JSONL layout; episode formats
    are converted (one Example per run, label = reward >= ``threshold``, group = task id,
    unrewarded runs skipped and counted in ``counts``).
    """
    path = Path(path)
    fmt = resolve_format(path, format, mapping=mapping)
    if fmt == "examples":
        return read_jsonl(path, Example)
    if fmt == "mapped" and mapping is not None and mapping.kind == "examples":
        return load_mapped(path, mapping)
    if fmt == "mapped" and mapping is not None:  # an Episode mapping
        episodes = load_mapped_episodes(path, mapping)
        return episodes_to_examples(episodes, threshold=threshold, counts=counts)
    return episodes_to_examples(load_episodes(path, format=fmt), threshold=threshold, counts=counts)

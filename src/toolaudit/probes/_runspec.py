"""What every harness's run specs share: the configuration hash a record carries, and
which task ids a study runs. Imports nothing of a harness, the analysis or the report."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from typing import Any

from toolaudit.errors import ConfigError


def config_hash(config: dict[str, Any]) -> str:
    """A run's configuration hash: 16 hex digits of SHA-256 over its sorted, compact
    JSON (every harness hashes its run specs this way)."""
    text = json.dumps(config, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def choose_ids(
    ids: Sequence[str],
    *,
    task_ids: Sequence[str] | None,
    limit: int | None,
    what: str,
    noun: str = "sample",
) -> list[str]:
    """The ids a study runs: the named ``task_ids`` (each must be one of ``ids``; a
    repeat runs once), else the first ``limit``, else all. ``what`` names the task set and
    ``noun`` its items in the refusal of an unknown id."""
    if task_ids is not None:
        known = set(ids)
        unknown = [t for t in task_ids if t not in known]
        if unknown:
            raise ConfigError(
                f"--task-ids: {what} has no {noun} {unknown[0]!r} "
                f"(it has {len(ids)}, e.g. {list(ids)[:3]})"
            )
        return list(dict.fromkeys(task_ids))
    return list(ids[:limit]) if limit is not None else list(ids)

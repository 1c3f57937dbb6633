"""Run metadata recorded in every results file: seeds, versions, configuration."""

from __future__ import annotations

import importlib.metadata
import json
import math
import platform
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from toolaudit.report._findings import RESULTS_SCHEMA_VERSION, Fallback
from toolaudit.runs import portable

_PACKAGES = ("toolaudit", "numpy", "scipy", "scikit-learn", "pydantic", "torch", "transformers")


def package_versions(extra: tuple[str, ...] = ()) -> dict[str, str]:
    """Installed versions of the packages that can change a result."""
    out: dict[str, str] = {"python": platform.python_version()}
    for name in (*_PACKAGES, *extra):
        try:
            out[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            continue
    return out


#: CPU features that choose floating-point kernels (and so can change trained weights).
_ISA_FLAGS = ("sse4_2", "avx", "avx2", "fma", "f16c", "avx512f", "avx512bw", "avx512_vnni",
              "avx512_bf16", "amx_tile", "amx_bf16")  # fmt: skip


def machine() -> dict[str, Any]:
    """The machine a computation ran on, as far as it can change floating-point results:
    CPU model, the vector instruction sets it offers (from ``/proc/cpuinfo`` on Linux),
    torch's chosen CPU kernel level where torch is installed, and the core count. Training
    is reproducible byte for byte only on a machine with the same instruction sets."""
    import os

    cpu, flags = "", set[str]()
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8").splitlines():
            key, _, value = line.partition(":")
            if key.strip() == "model name" and not cpu:
                cpu = value.strip()
            elif key.strip() == "flags" and not flags:
                flags = set(value.split())
            if cpu and flags:
                break
    except OSError:  # not Linux: the platform's own name, no instruction sets
        cpu = platform.processor()
    out: dict[str, Any] = {
        "cpu": cpu or platform.machine(),
        "isa": [f for f in _ISA_FLAGS if f in flags],
        "cores": os.cpu_count(),
    }
    try:
        import torch

        out["torch_cpu_capability"] = str(torch.backends.cpu.get_cpu_capability())
    except (ImportError, AttributeError):
        pass
    return out


def run_metadata(
    *,
    command: str,
    seed: int | None,
    config: dict[str, Any],
    fallbacks: Sequence[Fallback] = (),
) -> dict[str, Any]:
    """The ``meta`` block of a results file (the JSON form of
    :class:`~toolaudit.report.ResultMeta`): schema version, command, seed, configuration,
    package versions and the run's fallbacks. Deliberately no timestamps or host names, so
    the same command with the same seed writes byte-identical files."""
    return {
        "schema_version": RESULTS_SCHEMA_VERSION,
        "command": command,
        "seed": seed,
        "config": config,
        "versions": package_versions(),
        "fallbacks": [f.model_dump() for f in fallbacks],
    }


def clean_json(obj: Any) -> Any:
    """``obj`` made JSON-ready: NaN and infinities become ``None`` (JSON has no NaN, and an
    undefined statistic is written as null), numpy scalars plain numbers, tuples lists,
    and dict keys strings.

    >>> clean_json({"auroc": float("nan"), 1: (0.5, 2)})
    {'auroc': None, '1': [0.5, 2]}
    """
    if isinstance(obj, float):
        return None if math.isnan(obj) or math.isinf(obj) else obj
    if isinstance(obj, dict):
        return {str(k): clean_json(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [clean_json(v) for v in obj]
    if hasattr(obj, "item") and callable(obj.item):  # numpy scalars
        return clean_json(obj.item())
    return obj


#: ``meta.config`` keys that name outputs or caches, never inputs to record.
_NOT_INPUTS = frozenset({"out", "dir", "cache", "study", "report"})


def file_digest(path: Path) -> str:
    """SHA-256 of a file's bytes (hex), read in 1 MiB blocks."""
    import hashlib

    h = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def input_record(config: dict[str, Any], results_dir: Path) -> dict[str, Any]:
    """``meta.inputs``: each configured input path that exists (a top-level string of
    ``config`` naming a file or folder), as a path relative to the results file's folder,
    with a file's size and SHA-256, so ``--config`` replays from any folder and says when
    an input changed since."""
    import os

    out: dict[str, Any] = {}
    for key, value in sorted(config.items()):
        if key in _NOT_INPUTS or not isinstance(value, str) or not value:
            continue
        p = Path(value)
        try:
            exists = p.exists()
        except OSError:  # a name too long to be a path
            continue
        if not exists or ("/" not in value and not p.suffix):
            continue
        entry: dict[str, Any] = {"path": os.path.relpath(p.resolve(), results_dir.resolve())}
        if p.is_file():
            entry |= {"bytes": p.stat().st_size, "sha256": file_digest(p)}
        out[key] = entry
    return out


def write_results(path: str | Path, payload: dict[str, Any]) -> Path:
    """Write a results JSON file with stable formatting (NaN → null, sorted keys); a
    payload with ``meta`` but no ``schema_version`` gets the current one, and a ``meta``
    with a ``config`` gets ``inputs`` (:func:`input_record`) unless it has them, and its
    absolute paths are written relative to the file's folder (:func:`toolaudit.runs.portable`)."""
    if "meta" in payload and "schema_version" not in payload:
        payload = {"schema_version": RESULTS_SCHEMA_VERSION, **payload}
    path = Path(path)
    meta = payload.get("meta")
    if isinstance(meta, dict) and isinstance(meta.get("config"), dict):
        if "inputs" not in meta:
            inputs = input_record(meta["config"], path.parent)
            if inputs:
                meta = {**meta, "inputs": inputs}
        # absolute paths relative to the results' folder: no machine's layout in results
        meta = {**meta, "config": portable(meta["config"], path.parent)}
        payload = {**payload, "meta": meta}
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(clean_json(payload), indent=2, sort_keys=True, ensure_ascii=False)
    path.write_text(text + "\n", encoding="utf-8")
    return path


_clean = clean_json  # the former private name, kept for callers not yet updated

"""tau2-bench's directory layout (``Results.save(format="dir")``).

tau2 writes the run's metadata to ``results.json`` (everything but ``simulations``, plus
a ``simulation_index`` of ``{id, task_id, trial, reward, termination_reason, ...}``) and
each simulation to its own file ``simulations/<id>.json`` beside it. The layout is
accepted either as the folder or as its ``results.json``.

Simulations are read one file at a time, in index order when ``results.json`` has an
index (as tau2 writes it) and in file-name order otherwise (tau2's own fallback). As in
tau2's integrity check, an indexed simulation whose file is missing, or a simulation file
the index does not list, is an error. Every simulation file must be a regular file inside
``simulations/`` (a link leading out of it, a link loop, a FIFO or a device is refused),
and an index id must be a usable file name (no NUL byte, at most 255 bytes).
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from toolaudit.errors import TraceFormatError
from toolaudit.traces._files import NAME_MAX, input_kind
from toolaudit.traces._schema import Episode
from toolaudit.traces._source import field, read_json_document
from toolaudit.traces._tau2 import file_source, sim_episode

logger = logging.getLogger(__name__)

FORMAT = "tau2-dir"
META_FILE = "results.json"
SIMULATIONS_DIR = "simulations"


def resolve_dir_paths(path: str | Path) -> tuple[Path, Path]:
    """``(results.json, simulations/)`` for a results folder or its ``results.json``."""
    path = Path(path)
    if path.is_dir():
        return path / META_FILE, path / SIMULATIONS_DIR
    return path, path.parent / SIMULATIONS_DIR


def is_tau2_dir(path: str | Path) -> bool:
    """Whether ``path`` is a tau2 results folder, i.e. holds ``results.json`` and a
    ``simulations/`` folder (checked from the file system only, nothing is parsed)."""
    meta, sims = resolve_dir_paths(path)
    return meta.is_file() and sims.is_dir()


def looks_like_tau2_meta(doc: Any) -> bool:
    """Whether a parsed ``results.json`` is the metadata half of the directory layout:
    tau2's ``{timestamp, info, tasks, ...}`` without a ``simulations`` list."""
    return isinstance(doc, dict) and "simulations" not in doc and "info" in doc


def load_tau2_dir(path: str | Path) -> Iterator[Episode]:
    """Yield one Episode per simulation file of a tau2 results folder.

    Example:
        >>> eps = list(load_tau2_dir("runs/retail-gpt-4.1"))  # doctest: +SKIP
    """
    meta_path, sims_dir = resolve_dir_paths(path)
    meta = read_json_document(meta_path)
    if not isinstance(meta, dict):
        raise TraceFormatError(meta_path, None, None, "expected a JSON object (tau2 metadata)")
    if isinstance(meta.get("simulations"), list):
        raise TraceFormatError(
            meta_path,
            None,
            "simulations",
            "a complete tau2 results file, not the directory layout; read the file itself",
        )
    if not sims_dir.is_dir():
        raise TraceFormatError(sims_dir, None, None, "no simulations/ folder beside results.json")
    source = {**file_source(meta, meta_path), "format": FORMAT, "file": str(meta_path.parent)}
    for index, sim_path in enumerate(_simulation_files(meta, meta_path, sims_dir)):
        sim = read_json_document(sim_path)
        ep = sim_episode(
            sim,
            where="",
            index=index,
            path=sim_path,
            source={**source, "simulation_file": sim_path.name},
        )
        yield ep


def _resolved(path: Path) -> Path:
    try:
        return path.resolve()
    except (OSError, RuntimeError):  # RuntimeError: Python 3.11's "Symlink loop from ..."
        raise TraceFormatError(path, None, None, "a symbolic link loop") from None


def _simulation_files(meta: dict[str, Any], meta_path: Path, sims_dir: Path) -> list[Path]:
    on_disk = sorted(sims_dir.glob("*.json"))
    index = meta.get("simulation_index")
    inside = _resolved(sims_dir)
    if inside.parent != _resolved(meta_path.parent):  # simulations/ is a link elsewhere
        raise TraceFormatError(
            sims_dir, None, None, f"a link leading outside {meta_path.parent.name}/, not read"
        )
    if index is None:
        if not on_disk:
            raise TraceFormatError(sims_dir, None, None, "no simulation files (*.json)")
        for sim_path in on_disk:
            # without an index every file is read: one that is a link out of the folder,
            # a FIFO or a device is refused before anything is read
            if _resolved(sim_path).parent != inside:
                raise TraceFormatError(
                    sim_path, None, None, f"a link leading outside {sims_dir.name}/, not read"
                )
            if input_kind(sim_path) != "file":
                raise TraceFormatError(sim_path, None, None, "a folder, not a simulation file")
        return on_disk
    if not isinstance(index, list):
        raise TraceFormatError(
            meta_path, None, "simulation_index", f"expected a list, got {type(index).__name__}"
        )
    files: list[Path] = []
    for i, entry in enumerate(index):
        sim_id = field(entry, "id", path=meta_path, where=f"simulation_index[{i}]", kind=(str, int))
        _check_id(str(sim_id), meta_path=meta_path, field=f"simulation_index[{i}].id")
        sim_path = sims_dir / f"{sim_id}.json"
        # an id is a file name in simulations/: "../x", "/abs" or a link leading out of the
        # folder is refused, never read
        if "/" in str(sim_id) or "\\" in str(sim_id) or _resolved(sim_path).parent != inside:
            raise TraceFormatError(
                meta_path,
                None,
                f"simulation_index[{i}].id",
                f"id {str(sim_id)!r} names a file outside {sims_dir.name}/ (ids are file names)",
            )
        if sim_path in files:
            raise TraceFormatError(
                meta_path,
                None,
                f"simulation_index[{i}].id",
                f"id {str(sim_id)!r} is listed twice (each simulation is read once)",
            )
        if not sim_path.exists() and not sim_path.is_symlink():
            raise TraceFormatError(
                meta_path,
                None,
                f"simulation_index[{i}].id",
                f"simulation file {sim_path} is missing",
            )
        if input_kind(sim_path) != "file":  # a FIFO, a device or a loop is refused there
            raise TraceFormatError(sim_path, None, None, "a folder, not a simulation file")
        files.append(sim_path)
    listed = {p.name for p in files}
    extra = [p for p in on_disk if p.name not in listed]
    if extra:
        raise TraceFormatError(
            extra[0],
            None,
            None,
            f"simulation file not listed in {meta_path.name}'s simulation_index "
            f"({len(extra)} such file(s))",
        )
    return files


def _check_id(sim_id: str, *, meta_path: Path, field: str) -> None:
    """An index id names a file ``<id>.json``: a NUL byte or a name longer than the file
    system allows is refused by name, before any path is built from it."""
    if "\0" in sim_id:
        raise TraceFormatError(meta_path, None, field, "a NUL byte in the id (ids are file names)")
    size = len(f"{sim_id}.json".encode("utf-8", "surrogatepass"))
    if size > NAME_MAX:
        raise TraceFormatError(
            meta_path,
            None,
            field,
            f"id of {size - 5} bytes: the file name {sim_id[:24]!r}....json would be over "
            f"{NAME_MAX} bytes (ids are file names)",
        )

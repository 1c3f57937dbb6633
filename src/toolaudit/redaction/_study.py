"""The redaction audit on a user's own examples and frozen model (``toolaudit redact``):
the rows and classes chosen from the data, the run folder guarded (the same options to
resume, one run at a time), the model's answers cached, and per-row scores written
beside the results."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from toolaudit.errors import ConfigError, DataError, TraceFormatError, check_choice, check_min

if TYPE_CHECKING:
    from toolaudit.audits import ProgressFn
    from toolaudit.tokens import TokenClass
    from toolaudit.traces import Example, FieldMapping


@dataclass(frozen=True, slots=True)
class RedactionStudyConfig:
    """One redaction run on ``data`` (an Example JSONL, a folder holding
    ``examples.jsonl``, or any JSONL read through ``mapping``) with the frozen model
    ``model`` (a model spec, loaded with its answers cached in ``cache``, default
    ``OUT/cache.sqlite``).

    ``classes``: the token classes (empty: the default classes for the data);
    ``eval``: which rows are scored, key -> values (``None``: ``split=test`` when the
    rows carry it, else all); ``limit``: a seeded, label-balanced subsample;
    ``keep_tools`` / ``max_tool_lines``: shorter prompts for slow models, applied before
    redaction; ``chat``: each prompt is one user turn in the model's chat template;
    ``command``: recorded in ``meta.command`` and the run log."""

    data: Path
    model: str
    classes: tuple[TokenClass, ...] = ()
    eval: dict[str, list[str]] | None = None
    mapping: FieldMapping | None = None
    scoring: str = "options"
    limit: int | None = None
    n_boot: int = 2000
    seed: int = 0
    chat: bool = False
    keep_tools: tuple[str, ...] | None = None
    max_tool_lines: int | None = None
    cache: Path | None = None
    batch_rows: int = 8
    command: str = "toolaudit redact"

    def __post_init__(self) -> None:
        from toolaudit.redaction._scoring import SCORINGS

        check_choice("scoring", self.scoring, SCORINGS)
        check_min("n_boot", self.n_boot, 1)
        check_min("seed", self.seed, 0)
        check_min("batch_rows", self.batch_rows, 1)
        if self.limit is not None:
            check_min("limit", self.limit, 2)
        if self.max_tool_lines is not None:
            check_min("max_tool_lines", self.max_tool_lines, 1)
        for key, values in (self.eval or {}).items():
            if not key or not values or not all(values):
                raise ConfigError.invalid("eval", "KEY=VALUE[,VALUE]", f"{key}={','.join(values)}")


def examples_path(data: Path, *, mapped: bool = False) -> Path:
    """The Example JSONL to read: ``data`` itself or ``data/examples.jsonl``; another
    trace format is refused with the command that converts it (unless a mapping reads
    it)."""
    from toolaudit.traces import detect_format

    path = data / "examples.jsonl" if data.is_dir() else data
    if not path.is_file():
        raise DataError(f"{path}: no such file (expected examples.jsonl)")
    if mapped:
        return path
    fmt = detect_format(path)
    if fmt != "examples":
        raise TraceFormatError(
            path,
            None,
            None,
            f"this is a {fmt} file, but redact reads Example JSONL (id, label, group, "
            f"tools, prompt); convert it first: toolaudit traces convert {path} --out "
            "examples.jsonl",
        )
    return path


def _read(config: RedactionStudyConfig) -> tuple[Path, list[Example]]:
    from toolaudit.traces import Example, load_examples, read_jsonl

    path = examples_path(config.data, mapped=config.mapping is not None)
    if config.mapping is not None:
        return path, list(load_examples(path, mapping=config.mapping))
    return path, list(read_jsonl(path, Example))


def run_study(
    config: RedactionStudyConfig, out_dir: Path, *, progress: ProgressFn | None = None
) -> tuple[dict[str, Any], dict[str, int]]:
    """Run (or resume from the cache) ``config`` into ``out_dir``: checks the folder's
    recorded options and applies every class before writing anything (a run whose
    every class is refused for residuals writes nothing), holds the folder for this run, writes
    ``run_config.json``, ``scores.jsonl`` and a ``run_log.jsonl`` line with this
    invocation's made and cached calls; returns the ``redaction.json`` document (written
    by the caller, :func:`toolaudit.audits.run_audit`) and those calls."""
    from toolaudit.models import load_model
    from toolaudit.redaction._audit import redact_classes, run_redaction, select_rows
    from toolaudit.redaction._registry import default_classes
    from toolaudit.redaction._report import class_json, result_payload, write_scores
    from toolaudit.redaction._trim import trim_examples
    from toolaudit.report import run_metadata
    from toolaudit.runs import append_run_log, check_run_config, exclusive, write_run_config

    path, examples = _read(config)
    classes = list(config.classes) or default_classes(examples)
    eval_filter = config.eval
    if eval_filter is None:
        eval_filter = {"split": ["test"]} if any(e.split == "test" for e in examples) else {}
    rows = select_rows(examples, eval_filter=eval_filter, limit=config.limit, seed=config.seed)
    keep = list(config.keep_tools) if config.keep_tools is not None else None
    if keep is not None or config.max_tool_lines is not None:
        rows = trim_examples(rows, keep_tools=keep, max_lines=config.max_tool_lines)
    record = {
        "data": str(path),
        "model": config.model,
        "classes": [c.name for c in classes],
        "eval": eval_filter,
        "scoring": config.scoring,
        "limit": config.limit,
        "n_boot": config.n_boot,
        "chat": config.chat,
        "keep_tools": keep,
        "max_tool_lines": config.max_tool_lines,
    }
    # Every option that changes a result, classes with their sources; checked before
    # anything is written (the model's cache included), recorded once the model loads.
    run_config = {
        **record,
        "classes": [class_json(c) for c in classes],
        "seed": config.seed,
        "cache": str(config.cache) if config.cache else None,
    }
    check_run_config(out_dir, run_config)
    # Redact before anything is written: a run whose every class is refused leaves the
    # folder as it was, so a retry with other classes is not refused as a changed rerun.
    redactions = redact_classes(rows, classes)
    cache = config.cache or out_dir / "cache.sqlite"
    out_dir.mkdir(parents=True, exist_ok=True)
    with exclusive(out_dir):  # a second run into this folder is refused
        model = load_model(config.model, cache=cache)
        write_run_config(out_dir, run_config)
        result = run_redaction(
            rows,
            model,
            classes=classes,
            scoring=config.scoring,  # type: ignore[arg-type]
            seed=config.seed,
            n_boot=config.n_boot,
            batch_rows=config.batch_rows,
            chat=config.chat,
            progress=progress,
            redactions=redactions,
        )
        calls = {k: int(result.calls.get(k, 0)) for k in ("made", "cached")}
        append_run_log(out_dir, {"command": config.command, "calls": calls})
        write_scores(out_dir, result)
    meta = run_metadata(command=config.command, seed=config.seed, config=record)
    return result_payload(result, classes, meta), calls

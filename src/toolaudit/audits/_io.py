"""Writing a result model to its results file and loading one back.

Files are written with stable formatting (sorted keys, NaN as ``null``) and only the keys
that were set, so a file loaded back and written again is byte-identical, and the same
run with the same seed writes the same bytes.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, TypeVar

from pydantic import ValidationError

from toolaudit.audits._contract import AuditResult
from toolaudit.errors import DataError
from toolaudit.report import Fallback, ResultMeta, run_metadata, write_results

ResultT = TypeVar("ResultT", bound=AuditResult)


def result_meta(
    *,
    command: str,
    seed: int | None,
    config: dict[str, Any],
    fallbacks: list[Fallback] | None = None,
) -> ResultMeta:
    """The ``meta`` block of a new result, as a model: :func:`toolaudit.report.run_metadata`
    (the one place ``meta`` is built) validated into :class:`ResultMeta`, every field set,
    so every one is written."""
    fallbacks = list(fallbacks or [])
    meta = run_metadata(command=command, seed=seed, config=config, fallbacks=fallbacks)
    # the Fallback objects themselves, so only the fields each one set are written
    return ResultMeta.model_validate({**meta, "fallbacks": fallbacks})


def dump_result(result: AuditResult) -> dict[str, Any]:
    """The JSON document of a result: the keys that were set (plus ``schema_version``)."""
    doc = result.model_dump(mode="python", exclude_unset=True)
    doc["schema_version"] = result.schema_version
    return doc


def write_result(result: AuditResult, out_dir: str | Path, *, name: str | None = None) -> Path:
    """Write ``result`` to ``out_dir/<name>`` (default: its model's results file);
    returns the path."""
    path = Path(out_dir) / (name or type(result).results_file)
    return write_results(path, dump_result(result))


def load_result(path: str | Path, model: type[ResultT]) -> ResultT:
    """Load a results file into its model, validating every typed key.

    Raises:
        DataError: the file is missing, is not JSON, or does not fit the model (the
            message names the file and the first failing field).
    """
    p = Path(path)
    if p.is_dir():
        p = p / model.results_file
    try:
        doc = json.loads(p.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise DataError(f"{p}: no such file") from None
    except json.JSONDecodeError as exc:
        raise DataError(f"{p}, line {exc.lineno}: malformed JSON ({exc.msg})") from None
    except UnicodeDecodeError as exc:
        raise DataError(f"{p}: not valid UTF-8 (byte {exc.start})") from None
    except IsADirectoryError:
        raise DataError(f"{p}: a folder without {model.results_file}") from None
    if not isinstance(doc, dict):
        raise DataError(
            f"{p}, field '(top level)': expected a JSON object ({model.results_file}), "
            f"got a JSON {type(doc).__name__}"
        )
    try:
        return model.model_validate(doc)
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(x) for x in err["loc"]) or "(top level)"
        raise DataError(f"{p}: field '{where}': {err['msg']}") from None

"""The leakage audit's inputs: result or example files read through ``toolaudit.traces``
into the few Example fields the audit reads, with the checks that belong before a fit
(a file that is a folder, one label only, an unknown dilution carrier)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from toolaudit.errors import ConfigError, DataError
from toolaudit.traces import Example, FieldMapping, detect_format, load_examples, view_commands


def load_files(
    files: Sequence[Path],
    *,
    threshold: float,
    mapping: FieldMapping | None = None,
    carrier: str | None = None,
) -> tuple[list[Example], dict[str, Any]]:
    """The Examples of ``files`` (label = reward >= ``threshold`` for episode formats,
    each file read through ``mapping`` when given) and the results file's ``data`` block:
    the files' names, the number of examples, where labels came from (``label`` or
    ``reward``) and the viewer commands of recorded runs.

    Raises:
        DataError: a file is missing or a folder, or every run gets the same label.
        ConfigError: ``carrier`` (the dilution carrier) is not a tool of the data.
    """
    examples: list[Example] = []
    formats: set[str] = set()
    for path in files:
        if not path.exists():
            raise DataError(f"{path}: no such file")
        if path.is_dir():
            raise DataError(f"{path}: is a directory, not a data file")
        if mapping is None:
            formats.add(detect_format(path))
        else:  # a mapped file: labels come from rewards when the mapping makes Episodes
            formats.add("mapped-episodes" if mapping.kind == "episodes" else "mapped")
        # keep only what the audit reads: prompts and message copies can be large
        examples.extend(
            Example.model_construct(
                id=e.id, label=e.label, group=e.group, split=e.split, tools=e.tools
            )
            for e in load_examples(path, threshold=threshold, mapping=mapping)
        )
    tool_names = sorted({t.name for e in examples for t in e.tools})
    if carrier is not None and carrier not in tool_names:
        # checked before the audit runs: the dilution sweep needs it only at the end
        raise ConfigError.invalid("carrier", tool_names, carrier)
    label_source = "label" if formats <= {"examples", "mapped"} else "reward"
    if examples and label_source == "reward" and len({e.label for e in examples}) < 2:
        raise DataError(
            f"threshold={threshold!r} gives every one of the {len(examples)} runs the "
            f"label {examples[0].label} (reward >= threshold); choose a threshold inside "
            "the rewards' range"
        )
    data: dict[str, Any] = {
        "files": [p.name for p in files],
        "examples": len(examples),
        "label_source": label_source,
    }
    if mapping is None and (views := view_commands(list(files))):
        data["view"] = views
    return examples, data

"""The checks a study's records pass before any analysis: each run once, each run of
this study, each score a finite number of a plausible size.

A study folder is read as it was written: a record that is repeated, or that belongs to
another study (other seeds, policies, conditions or model settings than the folder's
``run_config.json`` records), would otherwise replace or join the study's own runs
silently; a NaN or absurd reward would turn every cell it enters into null or nonsense
without naming the record. Each is refused naming the file, the line and the field.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from toolaudit.errors import TraceFormatError
from toolaudit.runs import refuse_duplicate
from toolaudit.traces import Episode, check_reward_scores, check_score

_SCORES = ("rescored_reward", "true_quality", "proxy_reward")


def check_scores(ep: Episode, *, path: Path, line: int) -> None:
    """The record's reward, reward components and recorded scores."""
    check_reward_scores(ep.reward, ep.reward_components, path=path, line=line)
    for key in _SCORES:
        check_score(ep.source.get(key), path=path, line=line, field=f"source.{key}")


def _foreign(ep: Episode, recorded: Mapping[str, Any]) -> tuple[str, Any, Any] | None:
    """The first recorded option a record disagrees with: (field, its value, recorded)."""
    src = ep.source
    seed = recorded.get("seed")
    if isinstance(seed, int) and src.get("base_seed", seed) != seed:
        return "source.base_seed", src.get("base_seed"), seed
    for key, field in (("policies", "policy"), ("conditions", "condition")):
        allowed = recorded.get(key)
        if isinstance(allowed, list) and allowed and src.get(field) not in allowed:
            return f"source.{field}", src.get(field), allowed
    labels = recorded.get("n_seeds", recorded.get("epochs"))
    label = src.get("seed_label")
    if isinstance(labels, int) and isinstance(label, int) and not 0 <= label < labels:
        return "source.seed_label", label, f"0..{labels - 1}"
    info = src.get("agent_info")
    want = recorded.get("temperature")
    # the suite's model agent records its sampling temperature (its model by identity,
    # not by the spec run_config.json records, so the model is checked by config hash)
    if src.get("harness") is None and isinstance(info, dict) and want is not None:
        if "temperature" in info and info["temperature"] != want:
            return "source.agent_info.temperature", info["temperature"], want
    return None


def check_study_records(
    path: Path,
    records: Sequence[tuple[int, Episode]],
    recorded: Mapping[str, Any],
) -> None:
    """Refuse a repeated run (naming both lines), a record of another study than the one
    ``recorded`` (the folder's ``run_config.json``) describes (naming the record's line
    and field, and a line of this study's where there is one), and a reward or score that
    is not a finite number of plausible size."""
    seen: dict[str, int] = {}
    ours: int | None = None
    for line, ep in records:
        key = ep.source.get("config_hash")
        if isinstance(key, str):
            refuse_duplicate(seen, key, path=path, line=line, field="source.config_hash")
        check_scores(ep, path=path, line=line)
        diff = _foreign(ep, recorded)
        if diff is None:
            ours = line if ours is None else ours
            continue
        field, value, want = diff
        beside = f"; line {ours} is one of this study's" if ours is not None else ""
        raise TraceFormatError(
            path, line, field,
            f"{value!r}, but the study's run_config.json records {want!r}: a record of "
            f"another study{beside}; results of different options must not mix",
        )  # fmt: skip

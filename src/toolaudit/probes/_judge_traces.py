"""``probe judge-audit``: the seed's judge audit on any trace file ``toolaudit traces``
reads, into a resumable folder.

The folder holds ``run_config.json`` (the options that change verdicts: a rerun with
other options is refused before anything is written), ``verdicts.jsonl`` (one line per
(record, view, repeat, judge), appended as it arrives), ``judge_audit.json`` (the
statistics of :func:`seed_judge_audit` with ``meta``: seeds, versions, configuration,
fallbacks) and ``report.md`` / ``report.html``.

Example:
    >>> from toolaudit.probes import JudgeAuditConfig, judge_audit_traces
    >>> cfg = JudgeAuditConfig(judges=("llama:qwen", "llama:gemma"), n_records=8)
    >>> result = judge_audit_traces("retail.json", cfg, out_dir="out/ja")  # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from toolaudit.errors import DataError
from toolaudit.probes._judge_protocol import native_pass, record_id
from toolaudit.probes._judge_run import (
    VERDICTS_FILE,
    JudgeAuditConfig,
    judge_contexts,
    run_judges,
    select_records,
)
from toolaudit.probes._judge_seed import seed_judge_audit
from toolaudit.probes._judge_seed_report import judge_audit_sections
from toolaudit.progress import Progress
from toolaudit.report import run_metadata, with_fallbacks, write_report, write_results
from toolaudit.runs import check_run_config, exclusive, write_run_config
from toolaudit.traces import load_episodes

RESULTS_FILE = "judge_audit.json"


def run_options(
    traces: Path, config: JudgeAuditConfig, *, data_root: Path | None
) -> dict[str, Any]:
    """The options that change the verdicts, named as the command line names them (so
    ``--config judge_audit.json`` replays them and a refusal names the option)."""
    return {
        "traces": str(traces.resolve()),
        "judge_model": list(config.judges),
        "views": ",".join(config.views),
        "repeats": config.n_repeats,
        "records": config.n_records,
        "seed": config.seed,
        "judge_temperature": config.temperature,
        "max_tokens": config.max_tokens,
        "data_root": str(data_root.resolve()) if data_root is not None else None,
    }


def judge_audit_traces(
    traces: str | Path,
    config: JudgeAuditConfig,
    *,
    out_dir: str | Path,
    data_root: Path | None = None,
    load: Callable[[str], Any] | None = None,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """Choose records from ``traces``, ask every judge, write the folder, return the
    results (see the module docstring)."""
    out = Path(out_dir)
    traces = Path(traces)
    options = run_options(traces, config, data_root=data_root)
    flags = {k: "--" + k.replace("_", "-") for k in options if k != "traces"}
    check_run_config(out, options, options={"traces": "TRACES", **flags})  # before the lock
    with exclusive(out):
        check_run_config(out, options, options={"traces": "TRACES", **flags})
        episodes = list(load_episodes(traces))
        if not episodes:
            raise DataError(f"{traces}: no agent episodes to judge")
        chosen = select_records(episodes, config.n_records, seed=config.seed)
        contexts, fallbacks = judge_contexts(chosen, data_root=data_root)

        def record_options() -> None:
            write_run_config(out, options)

        verdicts = run_judges(
            chosen, contexts, config, out_path=out / VERDICTS_FILE, load=load,
            progress=progress, on_loaded=record_options,
        )  # fmt: skip
        result = seed_judge_audit(verdicts, seed=config.seed)
        result["records"] = [
            {"record_id": record_id(ep), "task_id": ep.task_id, "native_pass": native_pass(ep)}
            for ep in chosen
        ]
        result["meta"] = run_metadata(
            command="probe judge-audit",
            seed=config.seed,
            config=options,
            fallbacks=fallbacks,
        )
        write_results(out / RESULTS_FILE, result)
        sections = with_fallbacks(
            judge_audit_sections(result), fallbacks, title="Judge audit (seed protocol)"
        )
        write_report(out, "toolaudit: judge audit (seed protocol)", sections)
    return result

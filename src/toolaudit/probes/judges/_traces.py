"""``probe judge-audit``: the seed's judge audit on any trace files ``toolaudit traces``
reads (several files: several agents' runs, the records shared out evenly), into a
resumable folder.

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

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from toolaudit.errors import ConfigError, DataError
from toolaudit.probes.judges._records import VerdictRecord, native_pass, read_verdicts, record_id
from toolaudit.probes.judges._run import (
    CALL_SEEDS,
    VERDICTS_FILE,
    JudgeAuditConfig,
    judge_contexts,
    run_judges,
    select_records,
)
from toolaudit.probes.judges._seed import seed_judge_audit
from toolaudit.probes.judges._seed_report import judge_audit_sections
from toolaudit.progress import Progress
from toolaudit.report import (
    Fallback,
    run_metadata,
    with_fallbacks,
    write_report,
    write_results,
)
from toolaudit.runs import check_run_config, exclusive, read_run_config, write_run_config
from toolaudit.traces import Episode, load_episodes

RESULTS_FILE = "judge_audit.json"


def run_options(
    traces: Sequence[Path], config: JudgeAuditConfig, *, data_root: Path | None
) -> dict[str, Any]:
    """The options that change the verdicts, named as the command line names them (so
    ``--config judge_audit.json`` replays them and a refusal names the option); the trace
    files as one path, or a list when there are several."""
    paths = [str(t.resolve()) for t in traces]
    return {
        "traces": paths[0] if len(paths) == 1 else paths,
        "judge_model": list(config.judges),
        "views": ",".join(config.views),
        "repeats": config.n_repeats,
        "records": config.n_records,
        "seed": config.seed,
        "judge_temperature": config.temperature,
        "max_tokens": config.max_tokens,
        "prompt": config.prompt,
        "call_seeds": CALL_SEEDS,
        "data_root": str(data_root.resolve()) if data_root is not None else None,
    }


def check_seeding(out: Path) -> None:
    """Refuse a folder whose verdicts were drawn with the defective seeds (one per view
    and call index, shared by every record and judge): its ``run_config.json`` has no
    ``call_seeds`` entry. New calls would be drawn otherwise, and the two must not mix."""
    recorded = read_run_config(out)
    if recorded is not None and recorded.get("call_seeds") != CALL_SEEDS:
        raise ConfigError(
            f"{out} holds verdicts drawn with the old sampling seeds (one per view and call, "
            "shared by every record and judge), which are not resumed: move its "
            f"{VERDICTS_FILE} aside or use another --out (docs/probe.md, 'Judge seeding')"
        )


def choose_records(files: Sequence[Path], n_records: int, *, seed: int) -> list[Episode]:
    """``n_records`` records shared out evenly over ``files`` (the first files take the
    remainder), each file's share chosen by :func:`select_records`, so several agents'
    runs of a benchmark are all represented, with both native outcomes where a file has
    them."""
    chosen: list[Episode] = []
    base, extra = divmod(n_records, len(files))
    for i, path in enumerate(files):
        share = base + (1 if i < extra else 0)
        if share == 0:
            continue
        episodes = list(load_episodes(path))
        if not episodes:
            raise DataError(f"{path}: no agent episodes to judge")
        chosen += select_records(episodes, share, seed=seed)
    ids = [record_id(ep) for ep in chosen]
    twice = sorted({i for i in ids if ids.count(i) > 1})
    if twice:
        raise DataError(f"record {twice[0]} is in more than one trace file; give each once")
    return chosen


def judge_audit_traces(
    traces: str | Path | Sequence[str | Path],
    config: JudgeAuditConfig,
    *,
    out_dir: str | Path,
    data_root: Path | None = None,
    load: Callable[[str], Any] | None = None,
    progress: Progress | None = None,
    partial: bool = False,
) -> dict[str, Any]:
    """Choose records from ``traces``, ask every judge, write the folder, return the
    results (see the module docstring).

    ``partial``: ask no judge; analyse the records whose every verdict (every judge,
    view and repeat) is already in the folder, even while the study runs, and write
    the results and report under ``partial/`` (``result["partial"]`` says how many
    records of how many chosen they rest on)."""
    out = Path(out_dir)
    if partial:
        return _partial(out, traces, config, data_root=data_root)
    files = [Path(traces)] if isinstance(traces, str | Path) else [Path(t) for t in traces]
    if not files:
        raise DataError("judge-audit needs at least one trace file")
    options = run_options(files, config, data_root=data_root)
    flags = {k: "--" + k.replace("_", "-") for k in options if k != "traces"}
    check_seeding(out)
    check_run_config(out, options, options={"traces": "TRACES", **flags})  # before the lock
    with exclusive(out):
        check_seeding(out)
        check_run_config(out, options, options={"traces": "TRACES", **flags})
        chosen = choose_records(files, config.n_records, seed=config.seed)
        contexts, fallbacks = judge_contexts(chosen, data_root=data_root)

        def record_options() -> None:
            write_run_config(out, options)

        verdicts = run_judges(
            chosen, contexts, config, out_path=out / VERDICTS_FILE, load=load,
            progress=progress, on_loaded=record_options,
        )  # fmt: skip
        return _write(out, verdicts, chosen, config, options, fallbacks)


def _write(
    out: Path,
    verdicts: Sequence[VerdictRecord],
    chosen: Sequence[Episode],
    config: JudgeAuditConfig,
    options: dict[str, Any],
    fallbacks: list[Fallback],
    *,
    partial: dict[str, Any] | None = None,
) -> dict[str, Any]:
    result = seed_judge_audit(verdicts, seed=config.seed)
    result["records"] = [
        {"record_id": record_id(ep), "task_id": ep.task_id, "native_pass": native_pass(ep)}
        for ep in chosen
    ]
    title = "Judge audit (seed protocol)"
    if partial is not None:
        result["partial"] = partial
        title += f": partial, {partial['records_complete']} of {partial['records_chosen']} records"
    result["meta"] = run_metadata(
        command="probe judge-audit", seed=config.seed, config=options, fallbacks=fallbacks
    )
    write_results(out / RESULTS_FILE, result)
    sections = with_fallbacks(judge_audit_sections(result), fallbacks, title=title)
    write_report(out, f"toolaudit: {title[0].lower()}{title[1:]}", sections)
    return result


def _partial(
    out: Path,
    traces: str | Path | Sequence[str | Path],
    config: JudgeAuditConfig,
    *,
    data_root: Path | None,
) -> dict[str, Any]:
    files = [Path(traces)] if isinstance(traces, str | Path) else [Path(t) for t in traces]
    options = run_options(files, config, data_root=data_root)
    flags = {k: "--" + k.replace("_", "-") for k in options if k != "traces"}
    if read_run_config(out) is None:
        raise DataError(f"{out}: no judge audit has started there (no run_config.json)")
    check_seeding(out)
    check_run_config(out, options, options={"traces": "TRACES", **flags})
    chosen = choose_records(files, config.n_records, seed=config.seed)
    _, fallbacks = judge_contexts(chosen, data_root=data_root)
    done = {(v.judge, v.view, v.repeat, v.record_id): v for v in read_verdicts(out / VERDICTS_FILE)}
    keys = [(j, view, rep) for j in config.judges for view in config.views
            for rep in range(config.n_repeats)]  # fmt: skip
    whole = [ep for ep in chosen if all((*k, record_id(ep)) in done for k in keys)]
    if not whole:
        raise DataError(
            f"{out}: no record has all its {len(keys)} verdicts yet; nothing to analyse"
        )
    verdicts = [done[(*k, record_id(ep))] for ep in whole for k in keys]
    info = {"records_complete": len(whole), "records_chosen": len(chosen),
            "verdicts": len(done), "verdicts_planned": len(keys) * len(chosen)}  # fmt: skip
    fallbacks = [*fallbacks, Fallback(
        kind="skipped_part", what="judge_audit.partial",
        detail=f"a partial analysis: {len(whole)} of {len(chosen)} chosen records have every "
        f"verdict; the statistics rest on them alone", count=len(chosen) - len(whole),
    )]  # fmt: skip
    folder = out / "partial"
    folder.mkdir(exist_ok=True)
    return _write(folder, verdicts, whole, config, options, fallbacks, partial=info)

"""``run_faults``: pick the paired set, inject at the site, read every arm, and write
``rows.jsonl`` (one line per finished task, so a rerun resumes) and ``faults.json``.

Everything the run needs is checked before anything is written: the options, the
domain, the source, the chosen tasks and, when ``--out`` holds an earlier run, that it
was made with the same options (a resume never mixes two configurations).
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from toolaudit.errors import ConfigError, DataError, TraceFormatError
from toolaudit.faults._replay import ARMS, Site, ToolStep, make_arms
from toolaudit.faults._tasks import Candidate, domain_census, dropout_counts, episode_census
from toolaudit.progress import Progress
from toolaudit.runs import (
    check_run_config,
    check_writable,
    complete_lines,
    exclusive,
    options_digest,
    portable,
    read_run_config,
    refuse_duplicate,
    write_run_config,
)
from toolaudit.traces import Domain, kind_of

logger = logging.getLogger(__name__)
DomainName = Literal["retail", "mini"]
RETAIL_DIR = ("tau2", "domains", "retail")
#: Options recorded in ``run_config.json``: a resume must match every one of them.
RESULT_OPTIONS = ("source", "domain", "data_root", "model", "arms", "k_max", "policy", "seed")
#: The key of each ``rows.jsonl`` record that holds the digest of its run's options.
RUN_STAMP = "run"


@dataclass(frozen=True, slots=True)
class FaultsConfig:
    """Options of one run (recorded in ``faults.json``; a resumed run must match).

    ``tasks`` and ``task_ids`` choose how much of the paired set to score; they do not
    change any row, so a resume may extend a run with a larger ``tasks``.
    """

    source: str = "replay"
    domain: DomainName = "retail"
    data_root: str | None = None
    arms: tuple[str, ...] = ARMS
    k_max: int = 3
    tasks: int | None = None
    task_ids: tuple[str, ...] | None = None
    model: str = "embedded:qwen"
    device: str = "cpu"
    policy: str = "full"
    seed: int = 0
    workers: int = 1

    def __post_init__(self) -> None:
        check_config(self)

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready copy."""
        return {
            "source": self.source,
            "domain": self.domain,
            "data_root": self.data_root,
            "arms": list(self.arms),
            "k_max": self.k_max,
            "tasks": self.tasks,
            "task_ids": list(self.task_ids) if self.task_ids else None,
            "model": self.model,
            "device": self.device,
            "policy": self.policy,
            "seed": self.seed,
            "workers": self.workers,
        }

    def result_options(self) -> dict[str, Any]:
        """The options that change results (what ``run_config.json`` records)."""
        full = self.as_dict()
        return {k: full[k] for k in RESULT_OPTIONS}


def check_config(config: FaultsConfig) -> None:
    """Validate every option (ConfigError naming the parameter, allowed values, value)."""
    for arm in config.arms:
        if arm not in ARMS:
            raise ConfigError.invalid("arms", ARMS, arm)
    if "clean" not in config.arms:
        raise ConfigError.invalid("arms", "a list that includes 'clean'", list(config.arms))
    if len(set(config.arms)) != len(config.arms):
        raise ConfigError.invalid("arms", "each arm at most once", list(config.arms))
    if not 0 <= config.k_max <= 10:
        raise ConfigError.invalid("k_max", "0..10", config.k_max)
    if config.tasks is not None and config.tasks < 1:
        raise ConfigError.invalid("tasks", "an integer >= 1", config.tasks)
    if config.policy not in ("full", "compact"):
        raise ConfigError.invalid("policy", ("full", "compact"), config.policy)
    if config.domain not in ("retail", "mini"):
        raise ConfigError.invalid("domain", ("retail", "mini"), config.domain)
    if config.seed < 0:
        raise ConfigError.invalid("seed", "an integer >= 0", config.seed)
    if not 1 <= config.workers <= 64:
        raise ConfigError.invalid("workers", "1..64", config.workers)
    from toolaudit.models import parse_spec

    parse_spec(config.model)  # a malformed spec is refused before anything is written


def compact_policy(policy: str, *, max_chars: int = 2600) -> str:
    """The policy cut at a paragraph boundary (keeps the generic rules; shorter prompt)."""
    if len(policy) <= max_chars:
        return policy
    cut = policy.rfind("\n\n", 0, max_chars)
    return policy[: cut if cut > 0 else max_chars].rstrip()


def domain_fallbacks(domain: str) -> list[Any]:
    """The fallbacks a domain choice implies (the mini domain stands in for retail)."""
    from toolaudit.report import Fallback

    if domain != "mini":
        return []
    return [
        Fallback(
            kind="stand_in_data",
            what="faults.domain",
            detail="the shipped mini order-desk domain (4 tasks, same tools and record "
            "shapes) instead of the tau2 retail domain (--domain mini)",
        )
    ]


def resolve_domain(config: FaultsConfig) -> tuple[Domain, list[Any]]:
    """The domain and the fallbacks it implies. The retail domain must exist under the
    data root; the shipped mini domain is used only when asked for, as a fallback."""
    from toolaudit.faults._mini import mini_domain
    from toolaudit.traces import load_domain

    if config.domain == "mini":
        return mini_domain(), domain_fallbacks("mini")
    if config.data_root is None:
        raise DataError(
            "no tau2 retail domain: no data root found (pass --data-root DIR holding "
            "tau2/domains/retail, set TAU2_DATA_DIR, or use --domain mini)"
        )
    folder = Path(config.data_root).joinpath(*RETAIL_DIR)
    if not folder.is_dir():
        raise DataError(
            f"--data-root {config.data_root}: no tau2 retail domain at {folder} "
            "(expected tasks.json, db.json, policy.md; or use --domain mini)"
        )
    return load_domain(folder), []


def census_for(config: FaultsConfig, domain: Domain) -> list[Candidate]:
    """Every task of the source, judged by the site rule and the intent control."""
    if config.source == "replay":
        return domain_census(domain)
    from toolaudit.traces import load_episodes

    path = Path(config.source)
    if path.is_dir():
        raise TraceFormatError(
            path, None, None, "--source takes 'replay' or a results file, not a folder"
        )
    if not path.exists():
        raise TraceFormatError(
            path, None, None, "no such file (--source takes 'replay' or a results file)"
        )
    return episode_census(load_episodes(path), domain=domain, source=str(path))


def select(candidates: list[Candidate], config: FaultsConfig) -> list[Candidate]:
    """The qualifying tasks to score: ``task_ids`` exactly, else the first ``tasks``."""
    if config.task_ids:
        by_id = {c.task_id: c for c in candidates}
        chosen = []
        for tid in config.task_ids:
            if tid not in by_id:
                raise ConfigError.invalid("task_ids", "ids present in the source", tid)
            if not by_id[tid].qualifies:
                c = by_id[tid]
                raise ConfigError(
                    f"invalid task_ids={tid!r}: the task does not qualify ({c.reason}: {c.detail})"
                )
            chosen.append(by_id[tid])
        return chosen
    qualifying = [c for c in candidates if c.qualifies]
    return qualifying if config.tasks is None else qualifying[: config.tasks]


def check_resume(out_dir: Path, options: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Refuse an ``--out`` folder written with other options, naming the first one, or
    holding rows that are not this run's; returns the rows already done (task id ->
    record). Reads only: a refused run writes nothing."""
    if out_dir.exists() and not out_dir.is_dir():
        raise ConfigError.invalid("out", "a folder (new or from an earlier run)", str(out_dir))
    flags = {key: "--" + key.replace("_", "-") for key in RESULT_OPTIONS}
    check_run_config(out_dir, options, options=flags)
    rows = out_dir / "rows.jsonl"
    recorded = (out_dir / "run_config.json").is_file()
    done = read_done(rows, digest=run_stamp(options) if recorded else None, truncated="skip")
    if done and not recorded:
        raise ConfigError(
            f"{out_dir} holds rows ({rows.name}) but no run_config.json, so the options "
            "they were made with are unknown and results of different options could mix: "
            f"use another --out (or delete the folder {out_dir} to start over)"
        )
    return done


def run_stamp(options: dict[str, Any]) -> str:
    """The digest stamped on each record (:data:`RUN_STAMP`): the run's options, the data
    root left out and the source by its file name, so that a folder moved to another
    machine still reads its own records as its own."""
    stamped = {k: v for k, v in options.items() if k != "data_root"}
    if stamped.get("source") not in (None, "replay"):
        stamped["source"] = Path(str(stamped["source"])).name
    return options_digest(stamped)


def read_done(
    path: Path,
    *,
    digest: str | None = None,
    truncated: Literal["drop", "skip", "refuse"] = "drop",
) -> dict[str, dict[str, Any]]:
    """Task id -> finished record in ``rows.jsonl``.

    A complete last record that lacks only its newline is read; a truncated final line
    (an interrupted append) is dropped, skipped or refused by ``truncated``
    (:func:`toolaudit.runs.complete_lines`). A task recorded twice, or a record
    stamped with another run's options (``digest``), is refused naming both lines.
    """
    done: dict[str, dict[str, Any]] = {}
    seen: dict[str, int] = {}
    stamps: dict[str, int] = {}
    for lineno, line in complete_lines(path, truncated=truncated):
        try:
            rec = json.loads(line)
            task = str(rec["task"])
        except (json.JSONDecodeError, KeyError, TypeError):
            raise TraceFormatError(path, lineno, "task", "not a faults task record") from None
        except RecursionError:
            raise TraceFormatError(path, lineno, None, "nested too deeply") from None
        _check_rows(rec.get("rows"), path, lineno)
        refuse_duplicate(seen, task, path=path, line=lineno, field="task")
        stamp = rec.get(RUN_STAMP)
        if stamp is not None:
            stamps.setdefault(str(stamp), lineno)
            other = next((n for s, n in stamps.items() if s != str(stamp)), None)
            if other is not None or (digest is not None and stamp != digest):
                where = f"line {other}'s" if other is not None else "the folder's run_config.json"
                raise TraceFormatError(
                    path, lineno, RUN_STAMP,
                    f"a record of another study (made with other options than {where}); "
                    "results of different options must not mix",
                )  # fmt: skip
        done[task] = rec
    return done


def _check_rows(rows: Any, path: Path, line: int) -> None:
    """A record's ``rows``: a list of objects, each with its arm and step."""
    if not isinstance(rows, list):
        raise TraceFormatError(path, line, "rows", "missing, or not a list of row objects")
    for i, row in enumerate(rows):
        if not isinstance(row, dict):
            raise TraceFormatError(path, line, f"rows[{i}]", "not a row object")
        if not isinstance(row.get("arm"), str):
            raise TraceFormatError(path, line, f"rows[{i}].arm", "missing or not a string")
        if not isinstance(row.get("k"), int) or isinstance(row.get("k"), bool):
            raise TraceFormatError(path, line, f"rows[{i}].k", "missing or not an integer")


def _census_record(candidates: list[Candidate]) -> dict[str, Any]:
    return {
        "tasks": len(candidates),
        "qualifying": [c.task_id for c in candidates if c.qualifies],
        "constraints": {c.task_id: c.constraint for c in candidates if c.qualifies},
        "dropped": [
            {"task": c.task_id, "reason": c.reason, "detail": c.detail}
            for c in candidates
            if not c.qualifies
        ],
        "site_dropouts": dropout_counts(candidates),
    }


def run_faults(
    out_dir: Path,
    *,
    config: FaultsConfig,
    model: Any = None,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """Run (or resume) the audit in ``out_dir`` (``run_config.json``, ``census.json`` and
    one ``rows.jsonl`` line per task) and return the ``faults.json`` payload, which the
    caller writes once (the CLI beside the rows, the demo through ``run_audit``).

    ``model`` is an optional preloaded ``LanguageModel``; otherwise ``config.model`` is
    loaded when the first task is scored (a fully resumed run loads none). A preloaded
    model must be the one ``config.model`` names: its spec is what the folder records.
    """

    check_config(config)
    out_dir = Path(out_dir)
    options = config.result_options()
    done = check_resume(out_dir, options)
    domain, fallbacks = resolve_domain(config)
    candidates = census_for(config, domain)
    chosen = select(candidates, config)
    for cand in chosen:  # each task's arms are built before any model loads
        if cand.task_id not in done:
            task_arms(cand, config, domain.db)
    policy = compact_policy(domain.policy) if config.policy == "compact" else domain.policy
    # Nothing has been written so far: every check above can still refuse the run.
    with exclusive(out_dir):  # a second run is refused; a failed start leaves no folder
        run = _Run(out_dir, config, options, done, candidates, chosen)
        return _run_tasks(run, model, progress, policy, domain, fallbacks)


@dataclass(slots=True)
class _Run:
    """One run's folder, options and rows (read before anything was written)."""

    out_dir: Path
    config: FaultsConfig
    options: dict[str, Any]
    done: dict[str, dict[str, Any]]
    candidates: list[Candidate]
    chosen: list[Candidate]
    written: bool = False

    def record(self, record: dict[str, Any]) -> None:
        """Append one task's record (stamped with the run's options), writing the run's
        files first when this is the run's first record."""
        self.write_run_files()
        record = {**record, RUN_STAMP: run_stamp(self.options)}
        with (self.out_dir / "rows.jsonl").open("a", encoding="utf-8") as fh:
            fh.write(json.dumps(record, sort_keys=True) + "\n")
        self.done[str(record["task"])] = record

    def write_run_files(self) -> None:
        """``run_config.json`` and ``census.json``: written once the model has loaded and
        the first task is scored (or the run ends), so a run that fails on its model does
        not lock the folder to it."""
        if self.written:
            return
        self.written = True
        write_run_config(self.out_dir, self.options)
        census = _census_record(self.candidates)
        (self.out_dir / "census.json").write_text(
            json.dumps(census, sort_keys=True, indent=2) + "\n", encoding="utf-8"
        )


def _run_tasks(
    run: _Run,
    model: Any,
    progress: Progress | None,
    policy: str,
    domain: Domain,
    fallbacks: list[Any],
) -> dict[str, Any]:
    """Score the chosen tasks not yet in ``rows.jsonl`` (one line each, as each ends)
    and build the ``faults.json`` payload; the caller holds the folder's lock."""
    from toolaudit.faults._scoring import Reader

    config, chosen, done = run.config, run.chosen, run.done
    complete_lines(run.out_dir / "rows.jsonl")  # its last record's newline, when it lacks one
    todo = [c for c in chosen if c.task_id not in done]

    def finished(cand: Candidate, record: dict[str, Any], cpu: float) -> None:
        run.record(record)
        logger.info("task %s scored (%d/%d)", cand.task_id, len(done), len(chosen))
        if progress:  # the task's own CPU time: what a task costs, whatever the load
            progress(len(done), len(chosen), f"task {cand.task_id} ({cpu:.0f} CPU s)")

    if progress:
        progress(len(chosen) - len(todo), len(chosen), "start")
    if todo and model is None and config.workers > 1:
        _score_in_workers(todo, config, policy, domain.db, finished)
    elif todo:
        reader = Reader.load(model, config.model, policy=policy, device=config.device)
        for cand in todo:
            start = time.process_time()
            record = score_task(cand, config, reader, db=domain.db)
            finished(cand, record, time.process_time() - start)
    run.write_run_files()
    if progress:
        progress(len(chosen), len(chosen), "done")
    order = {c.task_id: i for i, c in enumerate(run.candidates)}
    records = sorted(
        (done[c.task_id] for c in chosen if c.task_id in done),
        key=lambda r: order.get(r["task"], len(order)),
    )
    census = _census_record(run.candidates)
    return build_payload(records, config.as_dict(), census, fallbacks=fallbacks)


def score_task(cand: Candidate, config: FaultsConfig, reader: Any, *, db: Any) -> dict[str, Any]:
    """Every arm's rows for one qualifying task."""
    traj, site, payloads, skipped = task_arms(cand, config, db)
    rows = reader.task_rows(traj, site, payloads, k_max=config.k_max)
    return task_record(cand, rows, payloads, skipped)


def task_arms(cand: Candidate, config: FaultsConfig, db: Any) -> tuple[Any, Site, Any, Any]:
    """A task's trajectory, site, arm payloads and the arms skipped (with why)."""
    from toolaudit.faults._rows import owned_payment_ids

    traj, site = cand.trajectory, cand.site
    assert traj is not None and isinstance(site, Site)
    step = traj.events[site.event]
    assert isinstance(step, ToolStep)
    payloads, skipped = make_arms(
        step.content,
        arms=config.arms,
        task_id=cand.task_id,
        owned_payment_ids=owned_payment_ids(traj, site, db),
        seed=config.seed,
    )
    return traj, site, payloads, skipped


def task_record(
    cand: Candidate, rows: list[dict[str, Any]], payloads: Any, skipped: Any
) -> dict[str, Any]:
    """The ``rows.jsonl`` line of one scored task."""
    assert cand.trajectory is not None and isinstance(cand.site, Site)
    step = cand.trajectory.events[cand.site.event]
    assert isinstance(step, ToolStep)
    for row in rows:
        row["status_constraint"] = cand.constraint
        if row["arm"] == "falsified_status":
            row["policy_mediated"] = cand.constraint == "policy"
    return {
        "task": cand.task_id,
        "status": "ok",
        "rows": rows,
        "arms_skipped": skipped,
        "site_tool": step.name,
        "site_returns": {arm: p.content for arm, p in payloads.items()},
    }


# -- worker processes ---------------------------------------------------------------
_WORKER: dict[str, Any] = {}


def _worker_init(spec: str, policy: str, device: str) -> None:
    """Load the model once per worker process, on one thread (two 1-thread processes use
    two cores better than one 2-thread process: benchmarks/faults_speed.py)."""
    import torch

    from toolaudit.faults._scoring import Reader

    torch.set_num_threads(1)
    _WORKER["reader"] = Reader.load(None, spec, policy=policy, device=device)


def _worker_rows(
    traj: Any, site: Site, payloads: Any, k_max: int
) -> tuple[list[dict[str, Any]], float]:
    start = time.process_time()
    rows = list(_WORKER["reader"].task_rows(traj, site, payloads, k_max=k_max))
    return rows, time.process_time() - start


def _score_in_workers(
    todo: list[Candidate],
    config: FaultsConfig,
    policy: str,
    db: Any,
    finished: Callable[[Candidate, dict[str, Any], float], None],
) -> None:
    """Score ``todo`` in ``config.workers`` processes; each finished task is handed to
    ``finished`` (written at once, with the worker's CPU seconds for it) in the order the
    tasks finish."""
    import multiprocessing
    from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait

    ctx = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(
        max_workers=min(config.workers, len(todo)),
        mp_context=ctx,
        initializer=_worker_init,
        initargs=(config.model, policy, config.device),
    ) as pool:
        pending = {}
        for cand in todo:
            traj, site, payloads, skipped = task_arms(cand, config, db)
            fut = pool.submit(_worker_rows, traj, site, payloads, config.k_max)
            pending[fut] = (cand, payloads, skipped)
        try:
            while pending:
                ready, _ = wait(pending, return_when=FIRST_COMPLETED)
                for fut in ready:
                    cand, payloads, skipped = pending.pop(fut)
                    rows, cpu = fut.result()
                    finished(cand, task_record(cand, rows, payloads, skipped), cpu)
        except BaseException:  # a failed task or an interrupt: stop, keep what is written
            pool.shutdown(wait=False, cancel_futures=True)
            raise


def build_payload(
    records: list[dict[str, Any]],
    cfg: dict[str, Any],
    census: dict[str, Any],
    *,
    fallbacks: list[Any],
) -> dict[str, Any]:
    """``faults.json`` from per-task records and the census (rows, counts, summary, meta)."""
    from toolaudit.faults._claims import seed_claims
    from toolaudit.faults._findings import findings
    from toolaudit.faults._summary import summarize
    from toolaudit.report import run_metadata

    rows = [row for r in records for row in r["rows"]]
    summary = summarize(rows, arms=tuple(cfg["arms"]), k_max=int(cfg["k_max"]))
    meta = run_metadata(command="faults run", seed=cfg["seed"], config=cfg)
    meta["fallbacks"] = [f.model_dump() for f in fallbacks]
    qualifying = len(census["qualifying"])
    return {
        "meta": meta,
        "rows": rows,
        "dropped": census["dropped"],
        "skipped": [{"task": d["task"], "reason": d["detail"]} for d in census["dropped"]],
        "counts": {
            "tasks_in_source": census["tasks"],
            "qualifying_tasks": qualifying,
            "site_dropouts": census["site_dropouts"],
            "tasks_scored": len(records),
            "tasks_not_scored": qualifying - len(records),
            "tasks_skipped": len(census["dropped"]),
            "skip_reasons": census["site_dropouts"],
        },
        "summary": summary,
        "findings": [
            f.model_dump()
            for f in [*findings(summary, census, len(records)), *seed_claims(summary)]
        ],
        # the first scored task's site return under every arm, for the transcript view
        "site_returns": [
            {"task": r["task"], "tool": r["site_tool"], "returns": r["site_returns"]}
            for r in records
            if r.get("site_returns")
        ][:1],
    }


def read_census(path: Path) -> dict[str, Any]:
    """``census.json``: the source's tasks, the qualifying ones and the dropped ones;
    TraceFormatError naming the field when it is not one."""
    try:
        census = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError, RecursionError) as exc:
        raise TraceFormatError(path, None, None, f"not valid JSON ({exc})") from None
    if not isinstance(census, dict):
        raise TraceFormatError(path, None, None, "not a JSON object (not a census record)")
    kinds: dict[str, type] = {"tasks": int, "qualifying": list, "dropped": list,
                              "site_dropouts": dict}  # fmt: skip
    for key, kind in kinds.items():
        if not isinstance(census.get(key), kind):
            raise TraceFormatError(path, None, key, f"missing or not {kind_of(kind())}")
    if not census["qualifying"] and not census["tasks"]:
        raise TraceFormatError(path, None, "tasks", "empty census: the run found no tasks")
    for i, d in enumerate(census["dropped"]):
        if not isinstance(d, dict) or not {"task", "detail"} <= set(d):
            raise TraceFormatError(path, None, f"dropped[{i}]", "not a dropped-task record")
    return census


def _recorded_meta(path: Path) -> dict[str, Any] | None:
    """``meta`` of an existing ``faults.json`` when it has a ``config`` object (``None``
    when the file is absent, unreadable or has none)."""
    try:
        meta = json.loads(path.read_text(encoding="utf-8")).get("meta")
    except (OSError, ValueError, AttributeError):
        return None
    if not isinstance(meta, dict) or not isinstance(meta.get("config"), dict):
        return None
    return meta


def analyze(out_dir: Path) -> dict[str, Any]:
    """Rebuild ``faults.json`` (summary included) from a run folder's ``rows.jsonl``,
    ``run_config.json`` and ``census.json``, without the model; returns the payload.
    ``meta.config`` and ``meta.versions`` are those the last run recorded in
    ``faults.json`` when its config agrees with ``run_config.json`` (the rows were
    computed under those packages); else the recorded options, with ``tasks`` unknown,
    and the installed versions."""
    from toolaudit.report import write_results

    out_dir = Path(out_dir)
    if not out_dir.is_dir():
        raise DataError(f"{out_dir}: not a folder written by 'faults run'")
    paths = [out_dir / n for n in ("run_config.json", "census.json", "rows.jsonl")]
    for p in paths:
        if not p.exists():
            raise DataError(f"{p}: missing (not a folder written by 'faults run')")
    options = read_run_config(out_dir)  # not a JSON object: refused, naming the file
    if options is None:
        raise TraceFormatError(paths[0], None, None, "not a file")
    census = read_census(paths[1])
    done = read_done(paths[2], digest=run_stamp(options), truncated="refuse")
    for key in ("arms", "k_max", "seed"):
        if key not in options:
            raise TraceFormatError(paths[0], None, key, "missing (not a faults run record)")
    check_writable(out_dir, "faults.json")  # a read-only folder: refused before any work
    order = {t: i for i, t in enumerate(census["qualifying"])}
    records = sorted(done.values(), key=lambda r: order.get(r["task"], len(order)))
    cfg = {**options, "tasks": None, "task_ids": None}
    recorded = _recorded_meta(out_dir / "faults.json")
    if recorded is not None:
        ours, theirs = portable(options, out_dir), portable(recorded["config"], out_dir)
        if any(theirs.get(k) != v for k, v in ours.items()):
            recorded = None  # another run's record: not this folder's options
    if recorded is not None:
        cfg = recorded["config"]  # the run's own record: --tasks, --device, --workers included
    fallbacks = domain_fallbacks(str(options.get("domain")))
    payload = build_payload(records, cfg, census, fallbacks=fallbacks)
    if recorded is not None and isinstance(recorded.get("versions"), dict):
        payload["meta"]["versions"] = recorded["versions"]  # the rows' packages
    write_results(out_dir / "faults.json", payload)
    return payload

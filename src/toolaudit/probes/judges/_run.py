"""Running the seed's judge audit on any trace file: choosing records, gathering what the
judge reads, and asking every judge for every (record, view, repeat), resumably.

* :func:`select_records` makes a seeded, stratified choice: native pass and native fail
  are taken in turn, and within each, tasks in turn, so both outcomes and several tasks
  are represented.
* :func:`judge_contexts` finds each record's task criteria (the trace file's own tau2
  task list, else the domain's ``tasks.json`` under the data root), the domain policy
  (``<data root>/tau2/domains/<domain>/policy.md``, else the trace's system messages) and
  the tool names. Whatever is missing is recorded as a fallback, never silently.
* :func:`run_judges` appends one :class:`VerdictRecord` per call to ``verdicts.jsonl`` as
  it arrives; a rerun into the same folder continues where it stopped.

A local judge gets a sampling seed per (judge, record, view, repeat) (:func:`call_seed`),
so a ``repeat`` call is a fresh draw of the same payload, as a second API request is, and
no two records share a draw. (The seed once ignored the judge and the record, so every
record's first call in a view shared one seed; folders judged then are refused on resume,
see :data:`CALL_SEEDS`.)
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
from collections import defaultdict
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

import numpy as np

from toolaudit.errors import ConfigError, TraceFormatError, check_choice, check_min
from toolaudit.models import check_temperature
from toolaudit.probes.judges._prompts import PROMPTS, judge_messages
from toolaudit.probes.judges._records import VerdictRecord, native_pass, record_id
from toolaudit.probes.judges._replies import parse_labelled_reply, parse_reply
from toolaudit.probes.judges._views import (
    AUDIT_VIEWS,
    PRESENTATION_VIEWS,
    JudgeContext,
    criteria_text,
    tool_names_of,
)
from toolaudit.progress import Progress
from toolaudit.report import Fallback
from toolaudit.runs import complete_lines
from toolaudit.traces import Episode, load_domain, read_json_document, validate_record

logger = logging.getLogger(__name__)

VERDICTS_FILE = "verdicts.jsonl"
#: Characters of each reply kept in its verdict record: the whole reply of up to 128
#: tokens, so a reply can be read again by a later parser.
REPLY_CHARS = 2000
#: What a call's sampling seed is made of, as ``run_config.json`` records it; a folder
#: without it was judged with the defective seeds (one per view and call index) and is
#: not resumed.
CALL_SEEDS = "seed,judge,record,view,call"


@dataclass(frozen=True, slots=True)
class JudgeAuditConfig:
    """The options that change a judge audit's verdicts (all recorded in its folder)."""

    judges: tuple[str, ...]
    views: tuple[str, ...] = PRESENTATION_VIEWS
    n_repeats: int = 3
    n_records: int = 40
    seed: int = 0
    temperature: float = 0.7
    max_tokens: int = 128
    prompt: str = "reason-first"

    def __post_init__(self) -> None:
        check_choice("prompt", self.prompt, PROMPTS)
        if not self.judges:
            raise ConfigError("judge-audit needs at least one --judge-model")
        if len(set(self.judges)) != len(self.judges):
            raise ConfigError(f"--judge-model: a judge is named twice in {list(self.judges)}")
        if not self.views:
            raise ConfigError("--views: give at least one view")
        for view in self.views:
            check_choice("views", view, AUDIT_VIEWS)
        check_min("repeats", self.n_repeats, 1)
        check_min("records", self.n_records, 1)
        check_min("seed", self.seed, 0)
        check_min("max_tokens", self.max_tokens, 1)
        check_temperature("judge_temperature", self.temperature)
        for judge in self.judges:
            judge_setting(judge, self.temperature)


def judge_setting(spec: str, default: float) -> tuple[str, float]:
    """``(model spec, temperature)`` of one judge: a judge spec may end in
    ``,temperature=T``, which sets that judge's sampling temperature (``default``, the
    audit's ``--judge-temperature``, otherwise), so one model at two settings can be two
    judges; they share one loaded model.

    >>> judge_setting("llama:qwen,threads=2,temperature=0", 0.7)
    ('llama:qwen,threads=2', 0.0)
    >>> judge_setting("llama:qwen,threads=2", 0.7)
    ('llama:qwen,threads=2', 0.7)
    """
    from toolaudit.models import split_options

    base, options = split_options(spec)
    text = options.pop("temperature", None)
    model = base + "".join(f",{k}={v}" for k, v in options.items())
    if text is None:
        return model, default
    try:
        value = float(text)
    except ValueError:
        raise ConfigError(f"--judge-model {spec!r}: temperature={text!r} is not a number") from None
    check_temperature(f"{spec}: temperature", value)
    return model, value


def _native_label(episode: Episode) -> str:
    value = native_pass(episode)
    return "unscored" if value is None else ("pass" if value >= 0.5 else "fail")


def select_records(episodes: Sequence[Episode], n_records: int, *, seed: int) -> list[Episode]:
    """A seeded, stratified choice of at most ``n_records`` records: strata (native pass,
    native fail, unscored) in turn, and within a stratum one record per task in turn, in
    a seeded order. Returned in a stable order (by record id).

    >>> from toolaudit.traces import Episode
    >>> eps = [Episode(task_id=str(i % 3), trial=i, reward=float(i % 2)) for i in range(12)]
    >>> sorted({e.reward for e in select_records(eps, 4, seed=0)})
    [0.0, 1.0]
    """
    check_min("records", n_records, 1)
    rng = np.random.default_rng(seed)
    strata: dict[str, dict[str, list[Episode]]] = defaultdict(lambda: defaultdict(list))
    for ep in sorted(episodes, key=record_id):
        strata[_native_label(ep)][ep.task_id].append(ep)
    queues: list[list[Episode]] = []
    for label in ("pass", "fail", "unscored"):
        by_task = strata.get(label)
        if not by_task:
            continue
        tasks = [by_task[t] for t in sorted(by_task)]
        for lst in tasks:
            rng.shuffle(lst)  # type: ignore[arg-type]
        order = rng.permutation(len(tasks))
        queue: list[Episode] = []
        while any(tasks):
            queue += [tasks[i].pop() for i in order if tasks[i]]
        queues.append(queue)
    chosen: list[Episode] = []
    while len(chosen) < n_records and any(queues):
        for q in queues:
            if q and len(chosen) < n_records:
                chosen.append(q.pop(0))
    return sorted(chosen, key=record_id)


def _trace_tasks(path: str, cache: dict[str, dict[str, Any]]) -> dict[str, Any]:
    if path not in cache:
        cache[path] = {}
        try:
            doc = read_json_document(Path(path))
        except (OSError, ValueError):
            return cache[path]
        if isinstance(doc, dict) and isinstance(doc.get("tasks"), list):
            cache[path] = {str(t.get("id")): t for t in doc["tasks"] if isinstance(t, dict)}
    return cache[path]


def _version(dist: str) -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(dist)
    except PackageNotFoundError:
        return "unknown"


def bundled_policy(domain: str) -> tuple[str, str]:
    """``(policy, where)``: the tau2 domain policy that inspect_evals ships with its data
    (``inspect_evals/tau2/data/domains/DOMAIN/policy.txt`` or ``.md``), read without
    importing inspect_evals; ``("", "")`` when it is not installed or has no such domain."""
    import importlib.util

    try:
        spec = importlib.util.find_spec("inspect_evals")
    except (ImportError, ValueError):
        return "", ""
    if spec is None or not spec.submodule_search_locations or not domain:
        return "", ""
    folder = Path(list(spec.submodule_search_locations)[0]) / "tau2" / "data" / "domains"
    for name in ("policy.txt", "policy.md"):
        path = folder / domain / name
        if path.is_file():
            return path.read_text(
                encoding="utf-8"
            ), f"inspect_evals/tau2/data/domains/{domain}/{name}"
    return "", ""


def judge_contexts(
    episodes: Sequence[Episode], *, data_root: Path | None
) -> tuple[dict[str, JudgeContext], list[Fallback]]:
    """Each record's :class:`JudgeContext` and the fallbacks taken (see the module)."""
    trace_cache: dict[str, dict[str, Any]] = {}
    domains: dict[str, Any] = {}
    missing: dict[str, list[str]] = defaultdict(list)
    bundled: dict[str, list[str]] = defaultdict(list)
    out: dict[str, JudgeContext] = {}
    for ep in episodes:
        rid = record_id(ep)
        domain_name = str(ep.source.get("domain") or "")
        if domain_name and domain_name not in domains:
            folder = data_root / "tau2" / "domains" / domain_name if data_root else None
            domains[domain_name] = load_domain(folder) if folder and folder.is_dir() else None
        domain = domains.get(domain_name)
        task: Mapping[str, Any] | None = None
        if ep.source.get("format") == "tau2" and ep.source.get("file"):
            task = _trace_tasks(str(ep.source["file"]), trace_cache).get(ep.task_id)
        if task is None and domain is not None:
            task = next((t.raw for t in domain.tasks if t.id == ep.task_id), None)
        policy = domain.policy if domain is not None else ""
        if not policy:
            policy = "\n".join(m.content or "" for m in ep.messages if m.role == "system")
        if not policy:
            policy, where = bundled_policy(domain_name)
            if policy:
                bundled[where].append(rid)
        if not policy:
            missing["policy"].append(domain_name or "(no domain)")
        if task is None:
            missing["criteria"].append(rid)
        out[rid] = JudgeContext(
            criteria=criteria_text(task) if task is not None else "",
            policy=policy,
            tools=tool_names_of(ep, task),
        )
    fallbacks = [
        Fallback(
            kind="stand_in_data", what="judge_audit.policy",
            detail=f"no domain folder under the data root and no system prompt in the trace: "
            f"the policy is the one inspect_evals ships ({source}, inspect-evals "
            f"{_version('inspect-evals')})", count=len(rids),
        )
        for source, rids in sorted(bundled.items())
    ]  # fmt: skip
    if missing["policy"]:
        domains_missing = sorted(set(missing["policy"]))
        fallbacks.append(Fallback(
            kind="other", what="judge_audit.policy",
            detail=f"no domain policy under the data root nor in the trace for "
            f"{domains_missing}: "
            "the judge is told none is available", count=len(missing["policy"]),
        ))  # fmt: skip
    if missing["criteria"]:
        fallbacks.append(Fallback(
            kind="other", what="judge_audit.criteria",
            detail="no tau2 task found for these records (neither in the trace file nor "
            "under the data root): the judge sees the conversation without task criteria",
            count=len(missing["criteria"]),
        ))  # fmt: skip
    for f in fallbacks:
        logger.warning("%s", f.sentence())
    return out, fallbacks


def call_seed(base: int, judge: str, record: str, view: str, repeat: int) -> int:
    """The sampling seed of one call: distinct per (judge, record, view, repeat), fixed by
    ``base``, the same on every rerun.

    >>> call_seed(0, "llama:qwen", "r1", "original", 0) != call_seed(0, "llama:qwen", "r2",
    ...                                                              "original", 0)
    True
    """
    key = f"judge-audit|{base}|{judge}|{record}|{view}|{repeat}"
    return int.from_bytes(hashlib.sha256(key.encode()).digest()[:4], "big")


def read_verdicts(path: Path) -> list[VerdictRecord]:
    """The complete verdict lines of ``path`` (a line still being written is left out),
    each checked; a bad line is a TraceFormatError naming the file and line."""
    return list(_done(path).values())


def _done(path: Path) -> dict[tuple[str, str, int, str], VerdictRecord]:
    done: dict[tuple[str, str, int, str], VerdictRecord] = {}
    if not path.is_file():
        return done
    for line_no, text in complete_lines(path, truncated="drop"):
        try:
            obj = json.loads(text)
        except json.JSONDecodeError as exc:
            raise TraceFormatError(path, line_no, None, f"not JSON ({exc.msg})") from None
        if not isinstance(obj, dict):
            raise TraceFormatError(path, line_no, None, "expected a JSON object")
        v = validate_record(VerdictRecord, obj, path, line_no)
        done[(v.judge, v.view, v.repeat, v.record_id)] = v
    return done


def _call_order(
    config: JudgeAuditConfig, episodes: Sequence[Episode]
) -> list[tuple[str, Episode, str, int]]:
    """Every (judge, record, view, repeat), record by record, so that a run stopped part
    way holds whole records (every judge, every view) that the statistics can use; within
    a record, view by view with ``repeat`` (the same bytes as ``original``) right after
    ``original``, and within a view judge by judge, each judge's repeats together. A
    judge that keeps the KV cache of its last prompt (llama.cpp's prefix match) re-reads
    nothing for its repeats, and two settings of one model (``,temperature=T``), which
    share the loaded model, read each payload once between them."""
    views = list(config.views)

    def group(view: str) -> int:
        return views.index("original" if view == "repeat" and "original" in views else view)

    jobs = [(j, ep, view, rep) for j in config.judges for ep in episodes
            for view in views for rep in range(config.n_repeats)]  # fmt: skip
    rank = {id(ep): i for i, ep in enumerate(episodes)}
    return sorted(
        jobs,
        key=lambda t: (rank[id(t[1])], group(t[2]), views.index(t[2]),
                       config.judges.index(t[0]), t[3]),
    )  # fmt: skip


@contextlib.contextmanager
def _appending(path: Path | None) -> Iterator[TextIO | None]:
    """``path`` opened for appending (None: nothing is written)."""
    if path is None:
        yield None
        return
    with path.open("a", encoding="utf-8") as fh:
        yield fh


def run_judges(
    episodes: Sequence[Episode],
    contexts: Mapping[str, JudgeContext],
    config: JudgeAuditConfig,
    *,
    out_path: Path | None,
    load: Callable[[str], Any] | None = None,
    progress: Progress | None = None,
    on_loaded: Callable[[], None] | None = None,
) -> list[VerdictRecord]:
    """Every judge's verdict on every (record, view, repeat), appended to ``out_path``
    (when given) as it arrives and reused on a rerun. ``load`` builds a model from its spec
    (``toolaudit.models.load_model`` by default); a judge is loaded only when it has
    calls left to make, and judges that differ only in ``,temperature=T`` share one model.
    ``on_loaded`` is called once every judge has loaded (at once when nothing is left to
    do), so a run that fails on a mistyped spec, first or not, records nothing."""
    done = _done(out_path) if out_path is not None else {}
    jobs = _call_order(config, episodes)
    todo = [t for t in jobs if (t[0], t[2], t[3], record_id(t[1])) not in done]
    cb = progress or (lambda d, t, label: None)
    cb(len(jobs) - len(todo), len(jobs), "verdicts")
    ready = on_loaded or (lambda: None)
    if not todo:
        ready()
    else:
        from toolaudit.models import check_model, load_model

        loader = load or load_model
        settings = {j: judge_setting(j, config.temperature) for j in config.judges}
        # Every judge with calls left is loaded before anything is written, so a mistyped
        # second spec records nothing (each model stays loaded and keeps its cache).
        needed = dict.fromkeys(settings[t[0]][0] for t in todo)
        models: dict[str, Any] = {spec: loader(spec) for spec in needed}
        for model in models.values():
            check_model(model, generates=True)
        ready()
        with _appending(out_path) as fh:
            for i, (judge, ep, view, rep) in enumerate(todo, start=1):
                model_spec, temperature = settings[judge]
                rid = record_id(ep)
                gen = models[model_spec].generate(
                    judge_messages(ep, contexts[rid], view, config.prompt),
                    max_tokens=config.max_tokens,
                    temperature=temperature,
                    seed=call_seed(config.seed, judge, rid, view, rep),
                )
                text = gen.text if gen.text else gen.raw
                parse = parse_labelled_reply if config.prompt == "reason-first" else parse_reply
                verdict, reason = parse(text)
                v = VerdictRecord(
                    judge=judge, view=view, repeat=rep, record_id=rid, task_id=ep.task_id,
                    verdict=verdict,  # type: ignore[arg-type]
                    native_reward=native_pass(ep), reason=reason, reply=text[:REPLY_CHARS],
                )  # fmt: skip
                done[(judge, view, rep, rid)] = v
                if fh is not None:
                    fh.write(v.model_dump_json() + "\n")
                    fh.flush()
                cb(len(jobs) - len(todo) + i, len(jobs), "verdicts")
    return [done[(j, view, rep, record_id(ep))] for j, ep, view, rep in jobs]

"""``run_faults``: replay or read trajectories, inject at the site, read every arm, and
write ``rows.jsonl`` (one line per finished task, so a rerun resumes) and ``faults.json``.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from toolaudit.errors import ConfigError, DataError
from toolaudit.faults._domain import FaultDomain, load_retail_domain, mini_domain
from toolaudit.faults._engine import CachedScorer
from toolaudit.faults._prompt import system_segment
from toolaudit.faults._readings import task_readings
from toolaudit.faults._recorded import load_recorded
from toolaudit.faults._replay import (
    ARMS,
    ReplayError,
    Site,
    Text,
    ToolStep,
    Trajectory,
    first_call_site,
    make_arms,
    replay,
)
from toolaudit.faults._schemas import TOOL_SCHEMAS
from toolaudit.faults._summary import summarize

logger = logging.getLogger(__name__)
Progress = Callable[[int, int, str], None]
_PAYMENT_ID = re.compile(r"\b(?:credit_card|gift_card|paypal)_\d+\b")


@dataclass(frozen=True, slots=True)
class FaultsConfig:
    """Options of one run (recorded in ``faults.json``; a resumed run must match)."""

    source: str = "replay"
    arms: tuple[str, ...] = ARMS
    k_max: int = 3
    tasks: int | None = None
    task_ids: tuple[str, ...] | None = None
    model: str | None = None
    policy: str = "full"
    seed: int = 0

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready copy."""
        return {
            "source": self.source,
            "arms": list(self.arms),
            "k_max": self.k_max,
            "tasks": self.tasks,
            "task_ids": list(self.task_ids) if self.task_ids else None,
            "model": self.model or "embedded",
            "policy": self.policy,
            "seed": self.seed,
        }


def _check(config: FaultsConfig) -> None:
    for arm in config.arms:
        if arm not in ARMS:
            raise ConfigError.invalid("arms", ARMS, arm)
    if "clean" not in config.arms:
        raise ConfigError.invalid("arms", "a list that includes 'clean'", list(config.arms))
    if not 0 <= config.k_max <= 10:
        raise ConfigError.invalid("k_max", "0..10", config.k_max)
    if config.policy not in ("full", "compact"):
        raise ConfigError.invalid("policy", ("full", "compact"), config.policy)


def compact_policy(policy: str, *, max_chars: int = 2600) -> str:
    """The policy cut at a paragraph boundary (keeps the generic rules; shorter prompt)."""
    if len(policy) <= max_chars:
        return policy
    cut = policy.rfind("\n\n", 0, max_chars)
    return policy[: cut if cut > 0 else max_chars].rstrip()


def load_source(
    source: str, data_root: Path | None
) -> tuple[str, list[Trajectory | str], dict[str, str], dict[str, Any]]:
    """``(policy, items, replay_errors, db)``: trajectories (or task ids that failed)."""
    errors: dict[str, str] = {}
    if source == "replay":
        domain: FaultDomain
        if data_root is not None and (data_root / "tau2" / "domains" / "retail").is_dir():
            domain = load_retail_domain(data_root)
        else:
            logger.info("no tau2 retail domain under %s: using the shipped mini domain", data_root)
            domain = mini_domain()
        items: list[Trajectory | str] = []
        for task in domain.tasks:
            try:
                items.append(replay(task, domain))
            except ReplayError as exc:
                errors[task.task_id] = str(exc)
                items.append(task.task_id)
        return domain.policy, items, errors, domain.db
    path = Path(source)
    if not path.exists():
        raise DataError(f"{path}: no such file (--source takes 'replay' or a results file)")
    policy = ""
    if data_root is not None and (data_root / "tau2" / "domains" / "retail").is_dir():
        policy = (data_root / "tau2" / "domains" / "retail" / "policy.md").read_text()
    return policy or mini_domain().policy, list(load_recorded(path)), errors, {}


def _select(items: list[Trajectory | str], config: FaultsConfig) -> list[Trajectory | str]:
    def tid(x: Trajectory | str) -> str:
        return x if isinstance(x, str) else x.task_id

    if config.task_ids:
        wanted = set(config.task_ids)
        chosen = [x for x in items if tid(x) in wanted]
        missing = wanted - {tid(x) for x in chosen}
        if missing:
            raise ConfigError.invalid("task_ids", "ids present in the source", sorted(missing))
        return chosen
    return items


def _owned_ids(traj: Trajectory, db: dict[str, Any], site: Site) -> set[str]:
    ids = set()
    for ev in traj.events:
        text = ev.content if isinstance(ev, ToolStep) else ev.text if isinstance(ev, Text) else ""
        ids.update(_PAYMENT_ID.findall(text))
    step = traj.events[site.event]
    assert isinstance(step, ToolStep)
    user = json.loads(step.content).get("user_id")
    if user and user in db.get("users", {}):
        ids.update(db["users"][user].get("payment_methods", {}))
    return ids


def _read_done(path: Path) -> dict[str, dict[str, Any]]:
    done: dict[str, dict[str, Any]] = {}
    if path.exists():
        for line in path.read_text().splitlines():
            if line.strip():
                rec = json.loads(line)
                done[rec["task"]] = rec
    return done


def run_faults(
    out_dir: Path,
    *,
    config: FaultsConfig,
    data_root: Path | None = None,
    model: Any = None,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """Run the audit and write ``out_dir/faults.json``; returns its payload.

    ``model`` is an optional preloaded ``(hf_model, tokenizer)``; otherwise
    ``config.model`` (HF id, local path, or ``None`` for the embedded default) is loaded.
    """
    from toolaudit.report import write_results

    _check(config)
    out_dir.mkdir(parents=True, exist_ok=True)
    cfg = config.as_dict()
    stamp = out_dir / "run_config.json"
    if stamp.exists() and json.loads(stamp.read_text()) != cfg:
        raise ConfigError.invalid("out", "a folder from a run with the same options", str(out_dir))
    stamp.write_text(json.dumps(cfg, sort_keys=True, indent=2) + "\n")
    policy, items, errors, db = load_source(config.source, data_root)
    if config.policy == "compact":
        policy = compact_policy(policy)
    items = _select(items, config)
    rows_path = out_dir / "rows.jsonl"
    done = _read_done(rows_path)
    tools = list(TOOL_SCHEMAS)
    system = system_segment(policy, tools)
    selector = first_call_site()
    scorer: CachedScorer | None = None
    target = config.tasks if config.tasks is not None else len(items)
    scored = sum(1 for r in done.values() if r["status"] == "ok")
    for n, item in enumerate(items):
        if scored >= target:
            break
        tid = item if isinstance(item, str) else item.task_id
        if progress:
            progress(scored, target, tid)
        if tid in done:
            continue
        record: dict[str, Any] = {"task": tid, "status": "skipped", "reason": "", "rows": []}
        site = None if isinstance(item, str) else selector(item)
        if isinstance(item, str):
            record["reason"] = f"replay failed: {errors.get(tid, '')}"
        elif isinstance(site, str):
            record["reason"] = site
        else:
            assert isinstance(site, Site)
            step = item.events[site.event]
            assert isinstance(step, ToolStep)
            payloads, _skipped = make_arms(
                step.content,
                arms=config.arms,
                task_id=tid,
                owned_payment_ids=_owned_ids(item, db, site),
                seed=config.seed,
            )
            if scorer is None:
                scorer = _scorer(model, config.model)
            record["rows"] = task_readings(
                item, site, payloads, scorer=scorer, system=system, tools=tools, k_max=config.k_max
            )
            record["status"] = "ok"
            record["arms_skipped"] = _skipped
            scored += 1
        with rows_path.open("a", encoding="utf-8") as fh:
            fh.write(json.dumps(record, sort_keys=True) + "\n")
        done[tid] = record
        logger.info(
            "task %s: %s %s (%d/%d)", tid, record["status"], record["reason"], n + 1, len(items)
        )
    if progress:
        progress(scored, target, "done")
    order = {(x if isinstance(x, str) else x.task_id): i for i, x in enumerate(items)}
    records = sorted(done.values(), key=lambda r: order.get(r["task"], len(order)))
    payload = _payload(records, cfg)
    payload["counts"]["prompt_sha"] = hashlib.sha256(system.encode()).hexdigest()[:16]
    write_results(out_dir / "faults.json", payload)
    return payload


def _payload(records: list[dict[str, Any]], cfg: dict[str, Any]) -> dict[str, Any]:
    """``faults.json`` from per-task records (rows, skips, counts, summary, meta)."""
    from toolaudit.report import run_metadata

    rows = [row for r in records for row in r["rows"]]
    skipped = [{"task": r["task"], "reason": r["reason"]} for r in records if r["status"] != "ok"]
    reasons: dict[str, int] = {}
    for s in skipped:
        key = re.sub(r"\d+|#W\w+|'[^']*'", "N", s["reason"])[:80]
        reasons[key] = reasons.get(key, 0) + 1
    return {
        "meta": run_metadata(command="faults run", seed=cfg["seed"], config=cfg),
        "rows": rows,
        "skipped": skipped,
        "counts": {
            "tasks_scored": sum(1 for r in records if r["status"] == "ok"),
            "tasks_skipped": len(skipped),
            "skip_reasons": reasons,
        },
        "summary": summarize(rows, arms=tuple(cfg["arms"]), k_max=int(cfg["k_max"])),
    }


_SCORERS: dict[int, CachedScorer] = {}


def _scorer(model: Any, spec: str | None) -> CachedScorer:
    """One scorer per loaded model and process, so pinned prefixes (the system turn)
    are computed once however many runs use them."""
    if model is None:
        from toolaudit.models import load_causal_lm

        model = load_causal_lm(spec, device="cpu")
    hf_model, tokenizer = model
    key = id(hf_model)
    if key not in _SCORERS or _SCORERS[key].model is not hf_model:
        _SCORERS[key] = CachedScorer(hf_model, tokenizer)
    return _SCORERS[key]


def analyze(out_dir: Path) -> dict[str, Any]:
    """Rebuild ``faults.json`` (summary included) from a run folder's ``rows.jsonl`` and
    ``run_config.json``, without the model; returns the payload."""
    from toolaudit.report import write_results

    done = _read_done(out_dir / "rows.jsonl")
    stamp = out_dir / "run_config.json"
    if not done or not stamp.exists():
        raise DataError(f"{out_dir}: no rows.jsonl / run_config.json from 'faults run'")
    cfg = json.loads(stamp.read_text())
    payload = _payload(list(done.values()), cfg)
    write_results(out_dir / "faults.json", payload)
    return payload

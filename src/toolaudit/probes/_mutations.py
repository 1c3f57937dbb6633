"""The conditions every harness shares, the mutations of a real benchmark's tool list as
data, and how a mutated record is read back.

This module sits beside the harnesses: the harnesses, the judges' views and the analysis
all import it, and it imports nothing of them (only ``toolaudit.errors`` and
``toolaudit.traces``). Nothing here imports Inspect or tau2-bench: a study's records are
analysed (and these mutations described, hashed and inverted) without either extra.

A :class:`ToolMutation` says, for one condition, which name each canonical operation is
shown under and how observations are presented:

* ``tool_rename``: meaning-preserving aliases, word by word from a synonym lexicon
  (``get_order_details`` -> ``fetch_order_details``); schemas, descriptions and the
  operation executed are kept. An alias never ends in ``_<canonical name>`` (a harness
  that accepts such suffixes, as inspect_evals' reference-action check does, would hide
  its own name dependence).
* ``misleading_names`` (positive control): a derangement of the names among the domain
  tools (each sorted name shows the next one's name), descriptions and schemas true to the
  operation each tool performs.
* ``reformat``: every JSON object or array a tool returns is shown wrapped as
  ``{"result": ...}`` with keys in reverse order and indented; values and array order are
  kept. Other returns (plain strings, numbers) are unchanged.
* ``original`` and ``repeat``: no change.

The same substitution of names reaches the policy text the agent reads
(:meth:`ToolMutation.substitute`), so the tool list, the policy and every call agree.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from toolaudit.errors import ConfigError
from toolaudit.traces import Episode, Message, ToolCall

#: Every condition, in canonical order: the five every harness runs, and the two only the
#: ResearchOps suite can express (its rubric and incentive are its own).
CONDITION_NAMES = (
    "original",
    "tool_rename",
    "reformat",
    "misleading_names",
    "rubric_change",
    "incentive_change",
    "repeat",
)
MUTATED = tuple(c for c in CONDITION_NAMES if c != "original")
HARNESS_CONDITIONS = ("original", "tool_rename", "reformat", "misleading_names", "repeat")
ObsFormat = Literal["native", "wrapped_reversed"]

# Word -> meaning-preserving synonym, for tool names of the kind benchmarks use.
SYNONYMS = {
    "get": "fetch",
    "find": "lookup",
    "list": "enumerate",
    "search": "query",
    "cancel": "void",
    "modify": "change",
    "update": "revise",
    "exchange": "swap",
    "return": "send_back",
    "book": "reserve",
    "send": "issue",
    "transfer": "handoff",
    "calculate": "compute",
    "enable": "activate",
    "disable": "deactivate",
    "suspend": "pause",
    "resume": "reactivate",
    "refuel": "top_up",
    "toggle": "switch",
    "check": "inspect",
    "set": "configure",
    "reset": "restore",
    "run": "execute",
    "connect": "join",
    "disconnect": "leave",
    "grant": "give",
    "make": "create",
    "delete": "remove",
    "read": "view",
    "write": "store",
}


def alias(name: str) -> str:
    """The meaning-preserving alias of one tool name (see the module docstring)."""
    words = name.split("_")
    out = [SYNONYMS.get(w, w) for w in words]
    shown = "_".join(out)
    if shown == name:
        shown = f"{name}_tool"
    if shown.endswith(f"_{name}"):
        shown = f"{shown}_op"
    return shown


@dataclass(frozen=True, slots=True)
class ToolMutation:
    """One condition's names and presentation (see the module docstring).

    ``names`` holds (canonical operation, name shown to the agent) for every tool.
    """

    condition: str
    names: tuple[tuple[str, str], ...]
    obs_format: ObsFormat = "native"

    def shown_of(self) -> dict[str, str]:
        """Canonical operation -> shown name."""
        return dict(self.names)

    def operation_of(self) -> dict[str, str]:
        """Shown name -> canonical operation."""
        return {shown: op for op, shown in self.names}

    @property
    def identity(self) -> bool:
        """Whether the agent sees exactly the canonical evaluation."""
        return self.obs_format == "native" and all(op == sh for op, sh in self.names)

    def substitute(self, text: str, *, inverse: bool = False) -> str:
        """``text`` with every whole-word canonical tool name replaced by its shown name
        (``inverse``: shown names back to canonical), all at once (so a derangement does
        not chain)."""
        pairs = ((sh, op) if inverse else (op, sh) for op, sh in self.names)
        renamed = {a: b for a, b in pairs if a != b}
        if not renamed:
            return text
        pattern = re.compile(
            r"(?<![A-Za-z0-9_])("
            + "|".join(re.escape(n) for n in sorted(renamed, key=len, reverse=True))
            + r")(?![A-Za-z0-9_])"
        )
        return pattern.sub(lambda m: renamed[m.group(1)], text)

    def describe(self) -> dict[str, Any]:
        """JSON-ready, hashed into each run's configuration and kept in its record."""
        return {
            "condition": self.condition,
            "names": [list(p) for p in self.names] if not self.identity else [],
            "obs_format": self.obs_format,
        }


def tool_mutation(condition: str, tool_names: Sequence[str]) -> ToolMutation:
    """The mutation of ``condition`` over a harness's tool names."""
    if condition not in HARNESS_CONDITIONS:
        raise ConfigError.invalid("condition", list(HARNESS_CONDITIONS), condition)
    names = list(dict.fromkeys(tool_names))
    if condition == "tool_rename":
        shown = {n: alias(n) for n in names}
        clash = sorted(set(shown.values()) & set(names)) or (
            sorted(n for n in names if list(shown.values()).count(shown[n]) > 1)
        )
        if clash:
            raise ConfigError(f"tool_rename: the aliases collide with tool names {clash}")
        return ToolMutation(condition, tuple((n, shown[n]) for n in names))
    if condition == "misleading_names":
        ordered = sorted(names)
        if len(ordered) < 2:
            raise ConfigError("misleading_names needs at least two tools to permute")
        nxt = {ordered[i]: ordered[(i + 1) % len(ordered)] for i in range(len(ordered))}
        return ToolMutation(condition, tuple((n, nxt[n]) for n in names))
    fmt: ObsFormat = "wrapped_reversed" if condition == "reformat" else "native"
    return ToolMutation(condition, tuple((n, n) for n in names), fmt)


def _json_container(text: str) -> Any:
    try:
        obj = json.loads(text)
    except (json.JSONDecodeError, TypeError, ValueError, RecursionError):
        return None
    return obj if isinstance(obj, dict | list) else None


def reformat_text(text: str) -> str:
    """The reformatted presentation of one tool return (unchanged unless JSON object or
    array): ``{"result": ...}``, keys reversed, indented; values and order of arrays kept.

    >>> print(reformat_text('{"a": 1, "b": [2, 3]}'))
    {
      "result": {
        "b": [
          2,
          3
        ],
        "a": 1
      }
    }
    """
    obj = _json_container(text)
    if obj is None:
        return text
    return json.dumps({"result": reverse_keys(obj)}, indent=2, ensure_ascii=False)


def unformat_text(text: str) -> str:
    """The compact canonical JSON of a reformatted return (inverse of
    :func:`reformat_text` up to whitespace); other text unchanged."""
    obj = _json_container(text)
    if not isinstance(obj, dict) or set(obj) != {"result"}:
        return text
    return json.dumps(reverse_keys(obj["result"]), separators=(",", ":"), ensure_ascii=False)


def mutation_of(episode: Episode) -> ToolMutation:
    """The mutation a record was made under (kept in ``source.mutation``)."""
    desc: Mapping[str, Any] = episode.source.get("mutation") or {}
    names = tuple((str(a), str(b)) for a, b in desc.get("names", []))
    fmt: ObsFormat = (
        "wrapped_reversed" if desc.get("obs_format") == "wrapped_reversed" else "native"
    )
    return ToolMutation(str(desc.get("condition", episode.condition)), names, fmt)


NOT_A_TOOL = "not_a_tool:"
UNPARSED = "unparsed_tool_call"  # the name a tool call the model layer could not parse gets


def _operation(name: str, op: Mapping[str, str]) -> str:
    if name == UNPARSED:
        return name
    return op.get(name, NOT_A_TOOL + name)


def canonical_episode(episode: Episode, mutation: ToolMutation) -> Episode:
    """Tool names mapped back to the operations executed, observations to their
    canonical presentation; arguments and order untouched. A call to a name that was no
    tool under the mutation (a memorised canonical name after renaming) becomes
    ``not_a_tool:NAME``, so it never reads as the operation it used to name."""
    if mutation.identity:
        return episode
    op = mutation.operation_of()
    messages: list[Message] = []
    for m in episode.messages:
        if m.tool_calls:
            calls = [
                ToolCall(id=c.id, name=_operation(c.name, op), arguments=c.arguments)
                for c in m.tool_calls
            ]
            m = m.model_copy(update={"tool_calls": calls})
        elif m.role == "tool":
            content = m.content
            if content is not None and mutation.obs_format == "wrapped_reversed":
                content = unformat_text(content)
            m = m.model_copy(update={"name": op.get(m.name or "", m.name), "content": content})
        messages.append(m)
    return episode.model_copy(update={"messages": messages})


class RecordedReader:
    """A real harness's records as the analysis reads them: the trajectory mapped back
    through the record's own mutation (``source.mutation``), and the reward the
    benchmark's own evaluation gave the mapped-back run (``source.rescored_reward``,
    computed when the run was recorded). Each harness names its subclass."""

    name = "recorded"

    def canonical(self, episode: Episode) -> Episode:
        """See :func:`canonical_episode`."""
        return canonical_episode(episode, mutation_of(episode))

    def rescore(self, episode: Episode) -> float:
        """The task's own scorer on the mapped-back log."""
        value = episode.source.get("rescored_reward")
        return float(value) if value is not None else float("nan")


def reverse_keys(obj: Any) -> Any:
    """``obj`` with every object's keys in reverse order (arrays kept in order)."""
    if isinstance(obj, dict):
        return {k: reverse_keys(obj[k]) for k in reversed(list(obj))}
    if isinstance(obj, list):
        return [reverse_keys(v) for v in obj]
    return obj


def action_sequence(episode: Episode) -> list[str]:
    """The canonical-order action sequence: one ``name(json args)`` string per call."""
    return [f"{c.name}({json.dumps(c.arguments, sort_keys=True)})" for c in episode.tool_calls()]

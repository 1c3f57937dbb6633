"""Evidence one click away: for each mutated condition, one original run and its mutated
twin (same policy, task and seed) as compact transcripts for the report.

The pair shown is the first, in policy, task and seed order, whose action sequence
changed; else the first whose pass outcome changed; else the first pair. Each turn is
``(role, text)``: tool calls as ``name(args)``, long texts cut to a few hundred
characters (the cut is marked), the system prompt left out.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from toolaudit.probes._mutations import MUTATED
from toolaudit.probes.analysis._runs import Run
from toolaudit.traces import Episode

MAX_CHARS = 300
MAX_TURNS = 16


def compact_turns(ep: Episode) -> list[list[str]]:
    """The episode's turns after the system prompt as ``[role, text]`` (JSON-ready)."""
    out: list[list[str]] = []
    for m in ep.messages:
        if m.role == "system":
            continue
        text = m.content or ""
        if m.tool_calls:
            calls = "; ".join(
                f"{c.name}({json.dumps(c.arguments, sort_keys=True)})" for c in m.tool_calls
            )
            text = f"{text}\n{calls}".strip()
        if len(text) > MAX_CHARS:
            text = text[:MAX_CHARS] + f" … [{len(text) - MAX_CHARS} more characters]"
        out.append([m.role, text])
    if len(out) > MAX_TURNS:
        out = [*out[:MAX_TURNS], ["…", f"{len(out) - MAX_TURNS} more turns"]]
    return out


def transcript_pairs(episodes: Sequence[Episode], runs: Sequence[Run]) -> list[dict[str, Any]]:
    """One pair per mutated condition (see the module docstring), with why it was
    chosen (``actions changed``, ``pass changed`` or ``first pair``)."""
    by_key = {
        (r.policy, r.condition, r.task, r.seed): (r, ep)
        for r, ep in zip(runs, episodes, strict=True)
    }
    policies = list(dict.fromkeys(r.policy for r in runs))
    out = []
    for cond in MUTATED:
        pairs = [
            (by_key[(p, "original", t, s)], by_key[(p, c, t, s)])
            for (p, c, t, s) in sorted(k for k in by_key if k[1] == cond)
            if (p, "original", t, s) in by_key
        ]
        pairs.sort(key=lambda pair: policies.index(pair[0][0].policy))
        if not pairs:
            continue
        reasons: list[tuple[str, Callable[[Run, Run], bool]]] = [
            ("actions changed", lambda o, m: o.actions != m.actions),
            ("pass changed", lambda o, m: o.passed != m.passed),
            ("first pair", lambda o, m: True),
        ]
        for why, test in reasons:
            hit = next((pr for pr in pairs if test(pr[0][0], pr[1][0])), None)
            if hit is not None:
                (orig, orig_ep), (mut, mut_ep) = hit
                out.append({
                    "condition": cond, "policy": orig.policy, "task": orig.task,
                    "seed": orig.seed, "why": why,
                    "reward": [orig.reward, mut.reward], "passed": [orig.passed, mut.passed],
                    "original": compact_turns(orig_ep), "mutated": compact_turns(mut_ep),
                })  # fmt: skip
                break
    return out

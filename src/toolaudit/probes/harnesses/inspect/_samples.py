"""One Inspect sample after its run: its log mapped back to canonical names and
presentation (every tool call and tool message in ``sample.messages`` and in the store's
chat-message lists, where inspect_evals' tau2 keeps the agent's side), rescored by the
task's own scorer, checked for a cut-off or an unscorable verdict, and its scorers named so
``inspect score LOG`` finds them. Imports Inspect only inside its functions.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from toolaudit.probes._mutations import NOT_A_TOOL, UNPARSED, ToolMutation, unformat_text
from toolaudit.probes.harnesses.inspect._private import registry_lookup

#: Seconds a model-driven run may take when --time-limit is not given.
DEFAULT_TIME_LIMIT = 1800
#: Messages a model-driven run of a generic task may reach when the task sets no limit (an
#: agent whose every reply is an unparseable tool call would otherwise loop forever).
DEFAULT_MESSAGE_LIMIT = 100


def map_back_message(
    m: dict[str, Any],
    mutation: ToolMutation,
    memo: dict[str, str],
    *,
    agent: bool,
    prompt_roles: tuple[str, ...] = ("system",),
) -> None:
    """Map one serialised chat message back in place: tool call names to the operation
    executed, a tool message's function and text to canonical, the policy in a message of
    ``prompt_roles`` to canonical names. On the agent's side (``agent``), a call to a name that was
    no tool under the mutation becomes ``not_a_tool:NAME``, so a memorised canonical name
    that failed to execute is never credited as that operation."""
    op = mutation.operation_of()

    def name(n: Any) -> Any:
        if not isinstance(n, str) or mutation.identity:
            return n
        if n in op:
            return op[n]
        return NOT_A_TOOL + n if agent and n != UNPARSED else n

    text = m.get("content")
    if m.get("role") in prompt_roles and isinstance(text, str):
        m["content"] = mutation.substitute(text, inverse=True)
    elif m.get("role") in prompt_roles and isinstance(text, list):
        for part in text:
            if isinstance(part, dict) and isinstance(part.get("text"), str):
                part["text"] = mutation.substitute(part["text"], inverse=True)
    for call in m.get("tool_calls") or []:
        if isinstance(call, dict):
            call["function"] = name(call.get("function"))
    if m.get("role") != "tool":
        return
    m["function"] = name(m.get("function"))
    content = m.get("content")
    if isinstance(content, str):
        m["content"] = memo.get(content, unformat_text(content))
    elif isinstance(content, list):
        for part in content:
            if isinstance(part, dict) and isinstance(part.get("text"), str):
                part["text"] = memo.get(part["text"], unformat_text(part["text"]))


def _map_back_value(value: Any, mutation: ToolMutation, memo: dict[str, str]) -> Any:
    """A store value with the agent's chat messages in it mapped back: a chat-message list
    (the agent's own), or ``{"role", "message"}`` trajectory entries, of which only the
    agent's (``role == "assistant"``) are the agent's side."""
    if not isinstance(value, list):
        return value
    for item in value:
        if isinstance(item, dict) and isinstance(item.get("message"), dict):
            map_back_message(item["message"], mutation, memo, agent=item.get("role") == "assistant")
        elif isinstance(item, dict) and "role" in item:
            map_back_message(item, mutation, memo, agent=True)
    return value


def map_back_sample(
    sample: Any, mutation: ToolMutation, memo: dict[str, str], *, agent_side: bool = False
) -> Any:
    """A copy of an ``EvalSample`` in canonical names and presentation (see the module
    docstring). ``agent_side``: ``sample.messages`` are the agent's own conversation (a
    generic task), so its user messages (where the names were substituted) and the final
    output are mapped back too."""
    from inspect_ai.log import EvalSample

    data = sample.model_dump(mode="json")
    # sample.messages: the user simulator's side in tau2 (its own tools are not mutated)
    roles = ("system", "user") if agent_side else ("system",)
    for m in data.get("messages") or []:
        map_back_message(m, mutation, memo, agent=agent_side, prompt_roles=roles)
    if agent_side:
        for choice in (data.get("output") or {}).get("choices") or []:
            if isinstance(choice.get("message"), dict):
                map_back_message(choice["message"], mutation, memo, agent=True)
    store = data.get("store") or {}
    data["store"] = {k: _map_back_value(v, mutation, memo) for k, v in store.items()}
    return EvalSample.model_validate(data)


def rescore_samples(
    log: Any,
    mutation: ToolMutation,
    memo: dict[str, str],
    scorer: Any,
    *,
    agent_side: bool = False,
) -> dict[str, tuple[float | None, dict[str, float | None]]]:
    """Sample id -> the first scorer's rescored value (the gap's) and every scorer's, by
    name: the task's own ``scorer`` rerun by ``inspect_ai.score`` on the log mapped back."""
    from inspect_ai import score

    # map_back_sample builds new samples; the header is shared, not copied
    samples = [map_back_sample(s, mutation, memo, agent_side=agent_side)
               for s in log.samples or []]  # fmt: skip
    mapped = log.model_copy(update={"samples": samples})
    scored = score(mapped, scorers=scorer, action="overwrite", display="none", copy=False)
    return {str(s.id): (first_score(s), scores_by_name(s)) for s in scored.samples or []}


def rescore_log(
    log: Any,
    mutation: ToolMutation,
    memo: dict[str, str],
    scorer: Any,
    *,
    agent_side: bool = False,
) -> tuple[float | None, dict[str, float | None]]:
    """The first sample's rescored value and every scorer's (a one-sample log)."""
    found = rescore_samples(log, mutation, memo, scorer, agent_side=agent_side)
    return next(iter(found.values()), (None, {}))


def reformatted_returns(sample: Any, memo: dict[str, str]) -> int:
    """How many distinct reformatted tool returns a sample's conversation holds (the
    memo's texts among its tool messages, in ``sample.messages`` and in the store's
    chat-message lists): what one run's own memo counts when the eval has many samples."""
    data = sample.model_dump(mode="json")
    found: set[str] = set()

    def visit(m: Any) -> None:
        if not isinstance(m, dict):
            return
        if isinstance(m.get("message"), dict):
            visit(m["message"])
            return
        if m.get("role") != "tool":
            return
        content = m.get("content")
        texts = [content] if isinstance(content, str) else [
            p.get("text") for p in content or [] if isinstance(p, dict)]  # fmt: skip
        found.update(t for t in texts if isinstance(t, str) and t in memo)

    for m in data.get("messages") or []:
        visit(m)
    for value in (data.get("store") or {}).values():
        for m in value if isinstance(value, list) else []:
            visit(m)
    return len(found)


def name_scorers_for_inspect(path: Path, task: str) -> None:
    """Give a registry task's log its scorers' package-qualified names (``telecom_scorer``
    becomes ``inspect_evals/telecom_scorer``) where Inspect's registry knows them, so
    ``inspect score LOG`` finds them without ``--scorer`` (the rebuilt task records them
    unqualified, which Inspect cannot look up). A file task's log is left as written."""
    from inspect_ai.log import read_eval_log, write_eval_log

    package, slash, _ = task.partition("/")
    if not slash or task.endswith(".py") or ".py@" in task:
        return
    # the names live in the header: read and rewrite it alone (the samples are left as
    # written; a whole rewrite re-condensed every sample, a third of a scripted run)
    log = read_eval_log(str(path), header_only=True)
    changed = False
    for scorer in log.eval.scorers or []:
        qualified = f"{package}/{scorer.name}"
        if "/" not in scorer.name and registry_lookup("scorer", qualified) is not None:
            scorer.name, changed = qualified, True
    if changed:
        write_eval_log(log, str(path), header_only=True)


def cut_off(sample: Any, time_limit: int | None, message_limit: int | None) -> str | None:
    """One line when the run was cut off by a time limit, or by the message limit
    toolaudit set (a task's own message limit ends its runs as the task intends)."""
    hit = getattr(sample, "limit", None)
    if hit is None:
        return None
    if hit.type in ("time", "working") and time_limit is not None:
        given = "its --time-limit" if time_limit != DEFAULT_TIME_LIMIT else "the default"
        return f"limit: the run reached {given} of {time_limit} s (--time-limit sets it)"
    if hit.type == "message" and message_limit is not None:
        return (
            f"limit: the run reached {message_limit} messages, toolaudit's limit for a "
            "generic task that sets none (the task's message_limit sets it)"
        )
    return None


def score_problem(sample: Any) -> str | None:
    """Why a finished sample has no score, in one line (None when it has one): no scorer
    ran, or the first scorer's value is not one number (None, a dict, a list)."""
    scores = list((sample.scores or {}).items())
    if not scores:
        return "no scorer gave a score"
    name, score = scores[0]
    value = score.value
    if isinstance(value, str | int | float | bool):
        return None
    shown = (
        f"a {type(value).__name__} of {len(value)}"
        if isinstance(value, dict | list)
        else repr(value)
    )
    return f"scorer {name!r} returned {shown}, not one number"


def scores_by_name(sample: Any) -> dict[str, float | None]:
    """Every scorer's value as a number by its name (None where it gives no number)."""
    from inspect_ai.scorer import value_to_float

    out: dict[str, float | None] = {}
    for name, score in (sample.scores or {}).items():
        value = score.value
        ok = isinstance(value, str | int | float | bool)
        out[str(name)] = float(value_to_float()(value)) if ok else None
    return out


def first_score(sample: Any) -> float | None:
    """The first scorer's value as a number (Inspect's own conversion)."""
    from inspect_ai.scorer import value_to_float

    for score in (sample.scores or {}).values():
        value = score.value
        if isinstance(value, str | int | float | bool):
            return float(value_to_float()(value))
    return None

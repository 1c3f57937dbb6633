"""First-screen verdict cards: what an audit found, how sure, and what to do next, in a
sentence rendered from its headline :class:`Finding`, with a severity a reader sees at a
glance (a problem found, nothing found, not enough data, or for information).

The sentence is a template filled from the finding's numbers, so it changes when they
change. The verdict keyword is kept beside it as a small tag. Severity is
``insufficient`` whenever the finding cannot support a verdict, whatever its keyword: a
sample of fewer than 2, or an interval that could not be estimated (one cluster); a
verdict that already says why it is insufficient keeps its own sentence.

Example:
    >>> f = Finding(name="probe.compare.delta", verdict="different", value=-0.2,
    ...             interval=(-0.3, -0.1), level=0.9, n=40, details={"metric": "Δ"})
    >>> card = verdict_card("Probe compare", f)
    >>> card.severity, card.tag
    ('problem', 'different')
    >>> card.sentence.split(":")[0]
    'B differs from A'
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from toolaudit.report._document import Section, Table
from toolaudit.report._findings import (
    Fallback,
    Finding,
    headline_sentence,
    interval_bounded,
    interval_label,
)

Severity = Literal["problem", "clear", "insufficient", "info"]

#: Fallback kinds that change what a conclusion rests on (other data, another policy, a
#: simulated part, a part not run), as opposed to a smaller or relaxed run of the same.
CONCLUSION_CHANGING = frozenset(
    {"stand_in_data", "stand_in_policy", "simulated_component", "skipped_part"}
)

# (severity, template) per verdict; a key "NAME:VERDICT" wins over "VERDICT". Fields:
# {subject} {metric} {value} {ci} {p} {n} {versus} {valid_rates}, and counts written as a
# person writes them: {n_tasks} {n_samples} {too_few} {share_tasks} {share_pairs}.
_PLAIN: dict[str, tuple[Severity, str]] = {
    # leakage
    "localized": (
        "problem",
        "A label shortcut sits in one tool's return: {subject} alone "
        "reaches {metric} {value}{ci}, above the full trace. Next: redact the token "
        "class it carries (toolaudit redact) and re-evaluate the same model.",
    ),
    "distributed": (
        "problem",
        "The labels can be read from the whole trace ({metric} "
        "{value}{ci}) and no single tool stands out. Next: redact the provenance "
        "classes together and re-evaluate.",
    ),
    "leakage.verdict:inconclusive": (
        "insufficient",
        "Some scope or control ranks the labels above chance; {subject}: {metric} "
        "{value}{ci}. But no tool stands apart from the full trace with this many rows. "
        "Next: audit more rows.",
    ),
    "none": (
        "clear",
        "No scope or control ranks the labels above chance; {subject}: {metric} "
        "{value}{ci}. No shortcut found in the tool returns.",
    ),
    "at_chance": (
        "clear",
        "{subject} ranks the labels at chance ({metric} {value}{ci}): no shortcut found there.",
    ),
    "stands_out": (
        "problem",
        "{subject} alone ranks the labels ({metric} {value}{ci}) "
        "above the {versus}. Next: find the token class it carries (provenance) "
        "and redact it.",
    ),
    "within": (
        "clear",
        "No single tool's return ranks the labels above the full trace "
        "(best: {subject}, {metric} {value}{ci}; {versus}).",
    ),
    # redaction
    "dependence": (
        "problem",
        "The model depends on the shortcut: with {subject}, it loses "
        "{metric} {value}{ci}, while the control holds ({versus}). Next: the "
        "score rests on that token class; re-evaluate without it.",
    ),
    "nonspecific_drop": (
        "insufficient",
        "Redaction lowers the score ({metric} {value}{ci}), "
        "but the control drops too ({versus}), so the loss cannot be "
        "attributed to one class. Next: a control that does not overlap.",
    ),
    "no_dependence": (
        "clear",
        "No dependence found: with {subject}, {metric} {value}{ci} "
        "({versus}), and the model ranks the original rows above chance.",
    ),
    "not_informative": (
        "insufficient",
        "The model ranks the original rows at chance, so "
        "redaction cannot show a dependence (with {subject}: {metric} "
        "{value}{ci}). Next: a model that scores above chance, or more rows.",
    ),
    "redaction.dependence:not_estimable": (
        "insufficient",
        "Not estimable: too few of the model's answers could be read (valid rates "
        "{valid_rates}), so the AUROCs rank the fixed invalid score, not the model. "
        "Next: a scoring mode that always answers (options or yesno) or a model that "
        "follows the answer format.",
    ),
    # probe: attribution of a gap
    "no_gap": (
        "clear",
        "The change leaves the score where it was ({subject}: {metric} {value}{ci}).",
    ),
    "scoring_rule": (
        "problem",
        "The score moved because of the evaluation, not the agent "
        "({subject}: {metric} {value}{ci}; {versus}). Next: fix the scoring "
        "rule before comparing agents.",
    ),
    "behaviour": (
        "problem",
        "The agent itself acted differently ({subject}: {metric} "
        "{value}{ci}; {versus}). Next: read the transcript pairs.",
    ),
    "scoring_rule_and_behaviour": (
        "problem",
        "Actions changed, yet rescoring the same "
        "trajectories closes the gap: the scoring rule explains "
        "it ({subject}: {metric} {value}{ci}; {versus}).",
    ),
    "unexplained": (
        "problem",
        "The gap stays after rescoring although no action changed "
        "({subject}: {metric} {value}{ci}; {versus}). Next: compare what the two "
        "runs' scorers read.",
    ),
    # probe: repeat control and comparison
    "rerun_flips": (
        "problem",
        "Identical reruns flip pass/fail in {share_pairs}{ci}: a "
        "change smaller than that is noise. Next: run several seeds per task.",
    ),
    "no_rerun_flips": ("clear", "Identical reruns agree ({share_pairs} flip{ci})."),
    "equivalent": ("clear", "B and A are equivalent within the margin: {metric} {value}{ci}."),
    "different": (
        "problem",
        "B differs from A: the interval excludes 0 and is not inside "
        "the margin ({metric} {value}{ci}). Next: read which tasks moved.",
    ),
    "probe.compare.delta:inconclusive": (
        "insufficient",
        "Neither equivalent nor shown different: {metric} {value}{ci}. Next: more tasks or seeds.",
    ),
    "not_estimable": (
        "insufficient",
        "Not estimable from {n_tasks}: an interval needs at least 2.",
    ),
    # faults
    "s0_rises": (
        "clear",
        "The model registers the failed tool return: its surprisal right "
        "after it rises in {share_tasks}{p}.",
    ),
    "s0_separates": (
        "insufficient",
        "Surprisal rises after the failed return in {share_tasks} and no other "
        "fault reaches it, but {too_few} for the "
        "sign test. Next: more tasks.",
    ),
    "no_clear_rise": (
        "problem",
        "The model's surprisal does not reliably rise after a failed "
        "return ({share_tasks}{p}): it may carry on as if the call "
        "succeeded. Next: read the per-task table.",
    ),
}


@dataclass(frozen=True, slots=True)
class Card:
    """One first-screen card: the title, severity, plain sentence, the numbers line
    (:func:`headline_sentence`) and the verdict keyword as a tag."""

    title: str
    severity: Severity
    sentence: str
    numbers: str
    tag: str | None


def counted(n: int | None, noun: str) -> str:
    """``n`` things as a person writes them.

    >>> counted(1, "task"), counted(50, "task"), counted(None, "task")
    ('1 task', '50 tasks', 'an unknown number of tasks')
    """
    if n is None:
        return f"an unknown number of {noun}s"
    return f"{n:,} {noun}" + ("" if n == 1 else "s")


def share_of(value: float | None, n: int | None, noun: str) -> str:
    """A share of ``n`` things as a count where it is one ("1 of 1 task", "3 of 50
    tasks"), else the share with its base.

    >>> share_of(1.0, 1, "task"), share_of(0.06, 50, "task"), share_of(0.5, None, "pair")
    ('1 of 1 task', '3 of 50 tasks', '0.500 of pairs')
    """
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return f"an undefined share of {noun}s"
    if n is not None and n > 0 and abs(value * n - round(value * n)) < 1e-6:
        return f"{round(value * n):,} of {counted(n, noun)}"
    if n is not None and n > 0:
        return f"{value:.3f} of {counted(n, noun)}"
    return f"{value:.3f} of {noun}s"


def _fmt(x: float | None) -> str:
    return "undefined" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.3f}"


def _insufficient(f: Finding) -> bool:
    """Fewer than 2 samples, or an interval that was not estimable (no bounds). A
    zero-width interval over many samples is a certain result, not a lack of data: the
    cluster bootstrap gives no bounds for one cluster, so a zero width means that every
    cluster agreed (the demo's 25 tasks each moved by exactly 0.25)."""
    if f.n is not None and f.n < 2:
        return True
    return f.interval is not None and not interval_bounded(f.interval)


def verdict_card(title: str, finding: Finding | None, *, note: str | None = None) -> Card:
    """The card of an audit's headline finding (``None``: the audit states no verdict at
    this size, shown for information)."""
    numbers = headline_sentence(title, finding, note=note)
    if finding is None:
        return Card(title, "info", "No verdict is stated at this size.", numbers, None)
    severity, template = _PLAIN.get(
        f"{finding.name}:{finding.verdict}",
        _PLAIN.get(finding.verdict, ("info", "{subject}")),
    )
    if _insufficient(finding) and severity not in ("info", "insufficient"):
        severity = "insufficient"
        template = ("Not enough data for a verdict: {n_samples}{ci} cannot support one. "
                    "Next: more tasks, seeds or rows.")  # fmt: skip
    ci = ""
    if finding.interval is not None:
        lo, hi = finding.interval
        label = interval_label(finding)
        level = f"{label} " if label else ""
        bounded = interval_bounded(finding.interval)
        ci = f" ({level}{_fmt(lo)} to {_fmt(hi)})" if bounded else " (interval not estimable)"
    p = (
        f", {finding.test or 'test'} p = {finding.p_value:.3g}"
        if finding.p_value is not None
        else ""
    )
    sentence = template.format(
        subject=finding.subject or "the headline measure",
        metric=str(finding.details.get("metric", "value")),
        value=_fmt(finding.value),
        ci=ci,
        p=p,
        n=finding.n if finding.n is not None else "?",
        n_tasks=counted(finding.n, "task"),
        n_samples=counted(finding.n, "sample"),
        too_few=counted(finding.n, "task") + (" is" if finding.n == 1 else " are") + " too few",
        share_tasks=share_of(finding.value, finding.n, "task"),
        share_pairs=share_of(finding.value, finding.n, "pair"),
        versus=str(finding.details.get("versus", "")) or "no comparison",
        valid_rates=", ".join(
            f"{k} {_fmt(v)}" for k, v in (finding.details.get("valid_rates") or {}).items()
        )
        or "unknown",
    )
    return Card(title, severity, sentence, numbers, finding.verdict)


def fallback_counts(parts: list[tuple[str, list[Fallback]]]) -> str:
    """``"3 (leakage 2, probe 1)"``: the number of fallbacks in force, per audit."""
    total = sum(len(fbs) for _, fbs in parts)
    per = ", ".join(f"{name} {len(fbs)}" for name, fbs in parts if fbs)
    return f"{total}" + (f" ({per})" if per else "")


def with_fallbacks(
    sections: list[Section], fallbacks: Sequence[Fallback | Mapping[str, Any]], *, title: str
) -> list[Section]:
    """``sections`` with one table of the run's fallbacks (models or their JSON) at the
    top of the first section (a section called ``title`` when there is none): each
    fallback appears once, in its audit's section, with those that change what a
    conclusion rests on marked."""
    items = [Fallback.model_validate(f) for f in fallbacks]
    if not items:
        return sections
    sections = list(sections) or [Section(title)]
    changing = sum(f.kind in CONCLUSION_CHANGING for f in items)
    table = Table(
        f"Fallbacks in force: {len(items)} substitutions or relaxations recorded in "
        f"meta.fallbacks ({changing} change what a conclusion rests on)",
        ["kind", "component", "what was used instead", "affected", "changes a conclusion"],
        [[f.kind, f.what, f.detail, f.count, "yes" if f.kind in CONCLUSION_CHANGING else "no"]
         for f in items],
    )  # fmt: skip
    sections[0].blocks.insert(0, table)
    return sections

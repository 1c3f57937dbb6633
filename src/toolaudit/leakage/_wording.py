"""The leakage audit's sentences, each a function of the verdict finding (``decide``).

Every figure a sentence states is read from the finding's ``details``, with the interval
the verdict rule used (family-wise: Bonferroni over the rule's comparisons), and every
relation it states ("above chance", "reliably above the full trace") is computed from
that interval, so a sentence cannot say more, or other, than the rule decided. The
report's tables show the same intervals (:func:`rule_readings`).

Two AUROCs measure different things and are always labelled: a **scope AUROC** (a
TF-IDF classifier on one tool's returned text, or on the full trace) and a
**prefix-lookup AUROC** (a lookup table on the first characters of one token class's
values); a third, the **presence-control AUROC**, reads only which tools were called.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from toolaudit.report import Finding

#: The sentence's name for where a figure is tabled, by kind of reading.
_TABLE = {
    "scope": "scope table",
    "prefix": "prefix lookup table",
    "presence": "presence control table",
}


def _num(x: Any) -> bool:
    return isinstance(x, int | float) and not isinstance(x, bool) and not math.isnan(x)


@dataclass(frozen=True, slots=True)
class Reading:
    """One AUROC the verdict rule read, with the family-wise interval it used.

    ``kind`` is ``scope`` (a tool or the full trace in one feature set), ``prefix``
    (the prefix lookup of token class ``cls`` on ``features`` such as ``2 char``) or
    ``presence`` (the presence control)."""

    kind: str
    scope: str
    features: str
    auroc: float | None
    low: float | None
    high: float | None
    cls: str | None = None

    @property
    def name(self) -> str:
        """What was read, as a reader tells it from the others."""
        if self.kind == "presence":
            return "presence control (tool calls)"
        if self.kind == "prefix":
            chars = self.features.removeprefix("prefix ").split()[0]
            return f"{self.cls or self.scope}, first {chars} characters"
        scope = "full trace" if self.scope == "full" else self.scope
        return f"{scope} ({self.features})"

    @property
    def metric(self) -> str:
        """``scope AUROC``, ``prefix-lookup AUROC`` or ``presence-control AUROC``."""
        return {"presence": "presence-control AUROC", "prefix": "prefix-lookup AUROC"}.get(
            self.kind, "scope AUROC"
        )

    @property
    def table(self) -> str:
        """Where the report tables this figure (the row it sits in)."""
        row = {"prefix": f", row {self.features.removeprefix('prefix ')}"}.get(self.kind, "")
        return _TABLE[self.kind] + row

    def below_chance(self) -> bool:
        """The interval lies wholly below 0.5."""
        return _num(self.high) and self.high is not None and self.high < 0.5

    def above_chance(self) -> bool:
        """The interval lies wholly above 0.5."""
        return _num(self.low) and self.low is not None and self.low > 0.5


def reading_of(row: Mapping[str, Any], cls: str | None = None) -> Reading:
    """A candidate or comparison row of the verdict's details as a :class:`Reading`."""
    scope, features = str(row.get("scope")), str(row.get("features"))
    kind = (
        "presence"
        if scope == "presence"
        else "prefix"
        if features.startswith("prefix ")
        else "scope"
    )
    lo, hi = (list(row.get("ci") or []) + [None, None])[:2]
    auroc = row.get("auroc")
    return Reading(kind, scope, features, auroc if _num(auroc) else None, lo, hi,
                   row.get("class") or cls)  # fmt: skip


def rule_readings(details: Mapping[str, Any]) -> list[Reading]:
    """Every AUROC the verdict rule read, with its family-wise interval: the full trace
    and each tool per feature set, the prefix lookup and the presence control."""
    out = [
        reading_of({"scope": "full", "features": f, **v})
        for f, v in (details.get("full") or {}).items()
    ]
    out += [reading_of(c) for c in details.get("comparisons") or []]
    prefix = details.get("prefix")
    if prefix:
        out.append(
            reading_of({**prefix, "scope": "prefix", "features": f"prefix {prefix['chars']}"})
        )
    presence = details.get("presence")
    if presence and presence.get("auroc") is not None:
        out.append(reading_of({"scope": "presence", "features": "tool calls", **presence}))
    return out


def rule_intervals(details: Mapping[str, Any]) -> dict[tuple[str, str], tuple[Any, Any]]:
    """``(scope, features) -> (low, high)``: the family-wise interval of each scope the
    verdict rule read (the scope table shows these)."""
    return {(r.scope, r.features): (r.low, r.high) for r in rule_readings(details)
            if r.kind == "scope"}  # fmt: skip


def headline_reading(details: Mapping[str, Any], subject: str | None) -> Reading | None:
    """The figure a ``localized`` verdict is stated with, on the card, in the first-screen
    line and first in the section's sentence: the carrier tool's own scope (its
    strongest feature set among the rule's candidates), else its prefix lookup."""
    rows = [r for r in details.get("candidates") or []
            if isinstance(r, dict) and r.get("scope") == subject]  # fmt: skip
    text = [r for r in rows if not str(r.get("features", "")).startswith("prefix")]
    chosen = (text or rows)[:1]
    return reading_of(chosen[0], details.get("carrier_class")) if chosen else None


def _difference(details: Mapping[str, Any], r: Reading) -> dict[str, Any] | None:
    """The paired difference ``AUROC(r) - AUROC(full trace)`` the rule computed for
    ``r``, with the full trace's AUROC and feature set."""
    if r.kind == "prefix":
        prefix = details.get("prefix") or {}
        d, feats = prefix.get("minus_full"), prefix.get("full_features")
    else:
        d = next((c.get("minus_full") for c in details.get("comparisons") or []
                  if c.get("scope") == r.scope and c.get("features") == r.features), None)  # fmt: skip
        feats = r.features
    if not d:
        return None
    full = (details.get("full") or {}).get(feats) or {}
    return {**d, "full_auroc": full.get("auroc"), "full_features": feats}


def _ci(lo: Any, hi: Any, *, signed: bool = False) -> str:
    if not (_num(lo) and _num(hi)):
        return "no interval"
    f = "+.3f" if signed else ".3f"
    return f"family-wise 95% CI [{lo:{f}}, {hi:{f}}]"


def _stated(r: Reading, *, table: bool = True) -> str:
    """``scope AUROC 0.775, family-wise 95% CI [0.678, 0.865] (scope table)``."""
    value = "undefined" if r.auroc is None else f"{r.auroc:.3f}"
    return f"{r.metric} {value}, {_ci(r.low, r.high)}" + (f" ({r.table})" if table else "")


def _versus_full(diff: Mapping[str, Any] | None) -> tuple[str, bool]:
    """How a reading stands against the full trace, from the difference's interval:
    the words and whether it is reliably above."""
    if not diff:
        return "against the full trace: no paired difference recorded", False
    lo, hi = (list(diff.get("ci") or []) + [None, None])[:2]
    full = diff.get("full_auroc")
    base = f"{full:.3f}; " if _num(full) else ""
    numbers = f"{base}difference {diff['delta']:+.3f}, {_ci(lo, hi, signed=True)}"
    if _num(lo) and lo > 0:
        return f"reliably above the full trace ({numbers})", True
    if _num(hi) and hi < 0:
        return f"reliably below the full trace ({numbers})", False
    return f"not reliably above the full trace ({numbers}, which holds 0)", False


def _versus_chance(r: Reading) -> str:
    if r.above_chance():
        return "above chance (its interval lies above 0.5)"
    if r.below_chance():
        return "below chance (its interval lies below 0.5)"
    return "not reliably above chance (its interval holds 0.5)"


def verdict_sentence(finding: Finding) -> str:
    """The report's first sentence, rendered from the verdict finding."""
    lo, hi = finding.interval or (None, None)
    d = finding.details
    if finding.verdict == "localized":
        head = _localized(finding, d)
    else:
        top = Reading(
            "presence" if finding.subject == "presence" else
            "prefix" if str(d.get("features", "")).startswith("prefix ") else "scope",
            str(finding.subject), str(d.get("features")), finding.value, lo, hi,
            (d.get("prefix") or {}).get("class"),
        )  # fmt: skip
        head = _head(finding, top)
    return head + _presence_tail(d.get("presence") or {})


def _localized(finding: Finding, d: Mapping[str, Any]) -> str:
    cls = d.get("carrier_class")
    first = headline_reading(d, finding.subject)
    if first is None:  # a finding without the rule's candidates: state what it has
        lo, hi = finding.interval or (None, None)
        first = Reading("scope", str(finding.subject), str(d.get("features")), finding.value,
                        lo, hi, cls)  # fmt: skip
    low = d.get("minus_full_low")
    diff = _difference(d, first)
    if diff is not None:
        relation, _ = _versus_full(diff)
    else:
        relation = "reliably above the full trace" + (
            f" (difference at least {low:+.3f})" if _num(low) else ""
        )
    what = (
        f"its scope ({first.features}) reaches"
        if first.kind == "scope"
        else f"a lookup on the first {first.features.removeprefix('prefix ').split()[0]} "
        f"characters of its token class `{first.cls}` reaches"
    )
    text = (
        f"Verdict: localized. The label is readable from tool `{finding.subject}`: {what} "
        f"{_stated(first)}, {relation}."
    )
    text += _second_reading(finding, d, first)
    if cls and f"`{cls}`" not in text:
        text += f" Its top provenance class is `{cls}`."
    return text + f" Test whether a model depends on it with {redact_command(cls)}."


def redact_command(cls: str | None) -> str:
    """The ``toolaudit redact`` command that tests a mined class (a bare ``--class NAME``
    names a mined class only beside ``--class-from``, which loads the candidates), with
    the paths a user fills in: the examples, an output folder, the frozen model and this
    leakage run's folder."""
    run = "toolaudit redact DATA --out DIR --model SPEC"
    if not cls:
        return f"`{run}` (DATA: the examples; SPEC: the frozen model)"
    return (
        f"`{run} --class-from LEAKAGE_DIR --class {cls}` (DATA: the examples; SPEC: the "
        "frozen model; LEAKAGE_DIR: this leakage run's folder)"
    )


def _second_reading(finding: Finding, d: Mapping[str, Any], first: Reading) -> str:
    """The carrier's other reading, labelled as the other quantity it is: after the
    tool's scope, its prefix lookup (when the rule read one on this tool); after the
    prefix lookup, the tool's own scope."""
    prefix = d.get("prefix")
    if first.kind == "scope" and prefix and prefix.get("auroc") is not None:
        r = reading_of({**prefix, "scope": "prefix", "features": f"prefix {prefix['chars']}"})
        relation, _ = _versus_full(_difference(d, r))
        chars = str(prefix["chars"]).split()[0]
        return (
            f" A lookup on the first {chars} characters of its token class `{r.cls}` "
            f"reaches {_stated(r)}, {relation}."
        )
    if first.kind == "prefix":
        feats = (prefix or {}).get("full_features")
        row = next((c for c in d.get("comparisons") or []
                    if c.get("scope") == finding.subject and c.get("features") == feats), None)  # fmt: skip
        if row is not None:
            r = reading_of(row)
            relation, _ = _versus_full(_difference(d, r))
            return (
                f" The tool's own scope ({r.features}) reaches {_stated(r)}, "
                f"{_versus_chance(r)} and {relation}."
            )
    return ""


def _presence_tail(pres: Mapping[str, Any]) -> str:
    """The presence control's sentence, in four cases: it explains the full trace, the
    full trace is reliably above it, it carries signal the full trace does not reach,
    or it is at chance. Every clause is read from the numbers it cites."""
    if not pres or pres.get("auroc") is None:
        return ""
    auroc = float(pres["auroc"])
    ci = pres.get("ci") or [None, None]
    d = pres.get("full_minus_presence")
    gap = ""
    if d is not None:
        gap = f" (full trace minus presence {d['delta']:+.3f}, {_ci(d['ci'][0], d['ci'][1])})"
    if pres.get("explains_full"):
        return (
            " The presence control (which tools were called, and how often) reaches "
            f"AUROC {auroc:.3f} and the full trace is not reliably above it{gap}: the "
            "outcome is readable from the actions taken, not from a returned value."
        )
    if not pres.get("above_chance"):
        return (
            f" The presence control (which tools were called, and how often) is not "
            f"reliably above chance (AUROC {auroc:.3f}, {_ci(ci[0], ci[1])}): the choice "
            "of actions alone does not carry the signal."
        )
    if d is not None and _num(d["ci"][0]) and d["ci"][0] > 0.0:
        return (
            f" The presence control reaches AUROC {auroc:.3f}, and the full trace is "
            f"reliably above it{gap}: more than the choice of actions carries the signal."
        )
    below = d is not None and d["ci"][1] is not None and d["ci"][1] < 0.0
    return (
        f" The presence control (which tools were called, and how often) reaches AUROC "
        f"{auroc:.3f} ({_ci(ci[0], ci[1])}), while the full trace is "
        f"{'reliably below it' if below else 'not reliably above chance'}{gap}: the "
        "choice of actions carries signal that the text features do not recover."
    )


def _head(finding: Finding, top: Reading) -> str:
    d = finding.details
    if finding.verdict == "distributed":
        best = d.get("best_tool") or {}
        best_part = (
            f" above every single tool (best: `{best['scope']}` {best['auroc']:.3f})"
            if best.get("scope")
            else ""
        )
        return (
            f"Verdict: distributed. The full trace in {top.features} reaches {_stated(top)}: "
            f"reliably above chance and{best_part}; no single tool carries the signal, so "
            "there is no one field to redact."
        )
    m = d.get("comparisons_m")
    read = f"none of the {m} AUROCs the rule reads" if _num(m) else "no AUROC the rule reads"
    if finding.verdict == "none":
        return (
            f"Verdict: none. {read[0].upper() + read[1:]} is reliably above chance on "
            f"{finding.n} evaluation examples; the highest lower bound is that of "
            f"{top.name}: {_stated(top)}. There is nothing to redact, though a weak "
            "shortcut could escape intervals this wide."
        )
    return (
        f"Verdict: inconclusive. {top.name[0].upper() + top.name[1:]} reaches "
        f"{_stated(top)}, above chance, but neither "
        "one tool is reliably above the full trace nor the full trace reliably above every "
        "tool; more evaluation examples would narrow the intervals."
    )


def strongest_tool_sentence(details: Mapping[str, Any], features: str) -> str | None:
    """The strongest single tool in ``features``, against chance and against the full
    trace, each relation computed from the rule's family-wise intervals, and what the
    rule makes of the two together (``None`` when the details hold no tool there)."""
    rows = [reading_of(c) for c in details.get("comparisons") or []
            if c.get("features") == features and _num(c.get("auroc"))]  # fmt: skip
    if not rows:
        return None
    best = max(rows, key=lambda r: r.auroc or 0.0)
    relation, above_full = _versus_full(_difference(details, best))
    both = best.above_chance() and above_full
    rule = (
        "both hold, so the rule counts it as a localized candidate"
        if both
        else "the rule calls a tool localized only when both hold, so it does not call this "
        "one localized"
    )
    return (
        f"With {features} features the strongest single tool is {best.scope}, at "
        f"{_stated(best)}: {_versus_chance(best)}, and {relation}; {rule}."
    )


def below_chance_note(finding: Finding) -> str | None:
    """A note on every AUROC whose family-wise interval lies wholly below 0.5, and what
    that means (``None`` when there is none)."""
    readings = rule_readings(finding.details)
    below = [r for r in readings if r.below_chance()]
    if not below:
        return None
    full = [r for r in below if r.kind == "scope" and r.scope == "full"]
    lowest = min(below, key=lambda r: r.auroc if r.auroc is not None else 1.0)
    among = (
        ", the full trace among them (" + "; ".join(
            f"{r.features}: {r.auroc:.3f} [{r.low:.3f}, {r.high:.3f}]" for r in full) + ")"
        if full
        else ""
    )  # fmt: skip
    n = f"{finding.n} evaluation examples" if finding.n is not None else "the evaluation rows"
    return (
        f"Below chance: {len(below)} of the {len(readings)} AUROCs the verdict rule reads "
        f"have a family-wise interval wholly below 0.5{among}; the lowest is {lowest.name}, "
        f"{_stated(lowest)}. Below chance means that these features do separate the "
        "labels, but in the direction opposite to the one the classifier learned on the "
        "fit rows: a shift between the fit and evaluation rows, or too few rows to fit on "
        f"(here {n}), can turn a fitted rule around. It is not evidence that there is no "
        "signal, nor of a shortcut a model could use: a rule that reverses between splits "
        "does not carry over to new data."
    )


def outcome_note(finding: Finding) -> str:
    """For agent runs (label = the episode's own reward): leakage against outcome
    prediction, tied to this run's verdict."""
    pres = finding.details.get("presence") or {}
    if finding.verdict == "localized":
        reading = (
            f"here one tool's returned text (`{finding.subject}`) predicts the reward on "
            "held-out tasks: inspect whether it reveals the outcome (a status or "
            "confirmation the grader reads) or merely reflects a successful run"
        )
    elif pres.get("explains_full"):
        reading = (
            "here the presence control explains the signal, so what predicts the "
            "reward is which actions the agent took: outcome prediction, not leakage"
        )
    elif finding.verdict == "distributed":
        reading = (
            "here the whole trajectory predicts the reward and no single returned value "
            "does: that is what a successful run looks like, not a leaked label"
        )
    else:
        reading = f"here the verdict is {finding.verdict}, so neither is shown"
    return (
        "These examples are agent runs whose label is the episode's own reward. "
        "Leakage means a returned value reveals the label; outcome prediction means the "
        f"trajectory reflects success, which is expected and harmless; {reading}."
    )


def first_screen_label(verdict: Mapping[str, Any]) -> tuple[Reading | None, str | None]:
    """The reading a results file's ``verdict`` block is headlined with, and its
    subject as the first-screen line names it (see :func:`headline_reading`; for a
    verdict without a carrier, the reading the decision turned on)."""
    evidence = verdict.get("evidence") or {}
    details = evidence.get("details") or {}
    carrier = verdict.get("carrier")
    if carrier is not None:
        r = headline_reading(details, carrier)
        return r, (r.name if r is not None else str(carrier))
    subject = evidence.get("subject")
    if subject is None or not _num(evidence.get("value")):
        return None, None
    lo, hi = (list(evidence.get("interval") or []) + [None, None])[:2]
    feats = str(details.get("features"))
    r = reading_of({"scope": subject, "features": feats, "auroc": evidence["value"],
                    "ci": [lo, hi]}, (details.get("prefix") or {}).get("class"))  # fmt: skip
    if verdict.get("kind", verdict.get("verdict")) == "distributed":
        return r, r.name
    return r, ("strongest scope " if r.kind == "scope" else "strongest reading, the ") + r.name

"""The redaction audit: redact one token class at a time, re-evaluate the same frozen
model on the same rows, and measure the AUROC lost (seed: Token-Class Redaction and
Appendix D).

For each variant: AUROC overall and per group, ΔA = A_orig − A_variant with a paired
stratified bootstrap interval over the same rows, and a paired permutation p-value.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from toolaudit.errors import ConfigError, DataError
from toolaudit.models import LanguageModel
from toolaudit.progress import Progress
from toolaudit.redaction._apply import (
    LOCATIONS,
    RedactionOutcome,
    RedactionResidualError,
    redact_examples,
)
from toolaudit.redaction._scoring import (
    INVALID_SCORE,
    SCORINGS,
    Scoring,
    model_input,
    score_rows,
)
from toolaudit.report import Fallback, record_fallback
from toolaudit.stats import (
    auroc,
    bootstrap_auroc,
    paired_bootstrap_auroc_delta,
    paired_permutation_auroc,
)
from toolaudit.tokens import TokenClass
from toolaudit.traces import Example

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class VariantResult:
    """One variant (``original`` or a redacted class) scored by the frozen model."""

    name: str
    placeholder: str | None
    auroc: float
    ci95: tuple[float, float]
    delta: float | None
    delta_ci95: tuple[float, float] | None
    p_value: float | None
    by_group: dict[str, float]
    by_group_delta: dict[str, float]
    replacements: int
    replacements_by_location: dict[str, int]
    rows_affected: int
    distinct_values: int
    residuals: int
    valid_rate: float
    option_mass: float
    scores: tuple[float, ...] = field(repr=False)

    def as_json(self) -> dict[str, Any]:
        """The variant's entry in ``redaction.json`` (DESIGN.md keys plus extras)."""
        return {
            "name": self.name,
            "placeholder": self.placeholder,
            "auroc": self.auroc,
            "ci95": list(self.ci95),
            "delta": self.delta,
            "delta_ci95": list(self.delta_ci95) if self.delta_ci95 is not None else None,
            "p_value": self.p_value,
            "by_group": self.by_group,
            "by_group_delta": self.by_group_delta,
            "replacements": self.replacements,
            "replacements_by_location": self.replacements_by_location,
            "rows_affected": self.rows_affected,
            "distinct_values": self.distinct_values,
            "residuals": self.residuals,
            "valid_rate": self.valid_rate,
            "option_mass": self.option_mass,
        }


@dataclass(frozen=True, slots=True)
class RedactionResult:
    """All variants on the same rows, with the rows' identity and the model calls."""

    variants: list[VariantResult]
    row_ids: tuple[str, ...]
    labels: tuple[int, ...]
    groups: tuple[str, ...]
    scoring: str
    model: str
    calls: dict[str, int]
    residual_check: dict[str, Any] = field(default_factory=dict)
    fallbacks: tuple[Fallback, ...] = ()
    examples: tuple[dict[str, Any], ...] = ()

    def variant(self, name: str) -> VariantResult:
        """The variant called ``name``."""
        for v in self.variants:
            if v.name == name:
                return v
        raise KeyError(name)


def select_rows(
    examples: Sequence[Example],
    *,
    eval_filter: dict[str, list[str]] | None = None,
    limit: int | None = None,
    seed: int = 0,
) -> list[Example]:
    """The evaluation rows: those matching ``eval_filter`` (attribute -> allowed values,
    e.g. ``{"split": ["test"]}``), then, when ``limit`` is smaller than that, a seeded
    label-balanced subsample (half positives where there are enough) in original order.
    """
    rows = list(examples)
    for key, allowed in (eval_filter or {}).items():
        if key not in ("split", "group", "id"):
            raise ConfigError.invalid("--eval key", ["split", "group", "id"], key)
        rows = [ex for ex in rows if str(getattr(ex, key)) in allowed]
    if not rows:
        raise DataError(f"no rows match the evaluation filter {eval_filter}")
    if limit is not None and limit < len(rows):
        if limit < 2:
            raise ConfigError.invalid("limit", "an integer >= 2", limit)
        rng = np.random.default_rng(seed)
        pos = [i for i, ex in enumerate(rows) if ex.label == 1]
        neg = [i for i, ex in enumerate(rows) if ex.label == 0]
        n_pos = min(len(pos), max(1, limit // 2))
        n_neg = min(len(neg), limit - n_pos)
        n_pos = min(len(pos), limit - n_neg)
        pick = rng.choice(pos, n_pos, replace=False).tolist() if n_pos else []
        pick += rng.choice(neg, n_neg, replace=False).tolist() if n_neg else []
        rows = [rows[i] for i in sorted(pick)]
    return rows


def _by_group(y: np.ndarray, groups: np.ndarray, scores: np.ndarray) -> dict[str, float]:
    return {g: auroc(y[groups == g], scores[groups == g]) for g in sorted(set(groups.tolist()))}


@dataclass(frozen=True, slots=True)
class ClassRedactions:
    """Token classes applied to the same rows: those with no residual, to be scored, and
    those refused because a recorded value survives (their outcomes say how often)."""

    names: tuple[str, ...]
    scored: tuple[tuple[TokenClass, RedactionOutcome], ...]
    refused: tuple[RedactionOutcome, ...]


def redact_classes(rows: Sequence[Example], classes: Sequence[TokenClass]) -> ClassRedactions:
    """Apply each class to ``rows`` on its own and sort the outcomes: a class with any
    residual (:func:`~toolaudit.redaction.find_residuals`) is refused, the rest are kept.

    Raises:
        RedactionResidualError: every class is refused (none is left to score); the
            message gives the count per class and the first survivor.
    """
    scored: list[tuple[TokenClass, RedactionOutcome]] = []
    refused: list[RedactionOutcome] = []
    for cls in classes:
        outcome = redact_examples(rows, cls)
        if outcome.residuals:
            refused.append(outcome)
        else:
            scored.append((cls, outcome))
    if refused and not scored:
        counts = ", ".join(f"{o.name}: {o.residuals}" for o in refused)
        raise RedactionResidualError(
            f"refusing to score: redacted values survive ({counts}); first: {refused[0].notes[0]}"
        )
    for o in refused:
        logger.warning("%s: not scored, %d redacted values survive", o.name, o.residuals)
    return ClassRedactions(tuple(c.name for c in classes), tuple(scored), tuple(refused))


def _refusals(refused: Sequence[RedactionOutcome]) -> list[Fallback]:
    """One ``skipped_part`` fallback per refused class."""
    return [
        Fallback(
            kind="skipped_part",
            what=f"redaction.{o.name}",
            detail=f"not scored: {o.residuals} occurrences of its redacted values survive "
            f"(plain substring search), so its variant would still show them; first: "
            f"{o.notes[0]}",
            count=o.residuals,
        )
        for o in refused
    ]


def run_redaction(
    examples: Sequence[Example],
    model: LanguageModel,
    *,
    classes: Sequence[TokenClass],
    scoring: Scoring = "options",
    seed: int = 0,
    n_boot: int = 2000,
    batch_rows: int = 8,
    chat: bool = False,
    progress: Progress | None = None,
    redactions: ClassRedactions | None = None,
) -> RedactionResult:
    """Evaluate ``model`` on the original rows and on each class's redacted copy.

    Args:
        examples: the evaluation rows (already selected); labels need both classes.
        model: the frozen model (wrap it in ``CachedModel`` so reruns make no calls).
        classes: token classes, one variant each, in order (names must be unique and
            not ``original``).
        scoring: ``options`` (expected answer over 1..10 from log-probabilities),
            ``yesno`` (P(yes)) or ``generate`` (greedy ``<answer>`` parsing).
        seed: seed of the bootstrap and permutation test.
        n_boot: bootstrap replicates and permutations.
        batch_rows: rows per model call.
        chat: render each prompt as one user turn in the model's chat template (the
            answer is the assistant's reply; the model must render a chat).
        progress: ``cb(done, total, label)`` after each batch.
        redactions: ``classes`` already applied to ``examples`` by
            :func:`redact_classes` (so a caller can check before writing anything);
            ``None``: applied here.

    Every class is applied before the model is called (:func:`redact_classes`). A class
    whose recorded values survive anywhere in a prompt-bearing field (plain substring
    search, see :func:`~toolaudit.redaction.find_residuals`) is refused: it is not
    scored, and it is recorded as a ``skipped_part`` fallback with its residual count
    (and in ``residual_check["refused"]``); the other classes are scored.

    Raises:
        RedactionResidualError: every class is refused (the message gives the count per
            class and the first survivor).
    """
    if scoring not in SCORINGS:
        raise ConfigError.invalid("scoring", SCORINGS, scoring)
    names = [c.name for c in classes]
    if len(set(names)) != len(names) or "original" in names:
        raise ConfigError(f"token class names must be unique and not 'original'; got {names}")
    rows = list(examples)
    y = np.array([ex.label for ex in rows])
    if len(set(y.tolist())) < 2:
        raise DataError(f"the {len(rows)} evaluation rows hold a single label; AUROC is undefined")
    groups = np.array([ex.group for ex in rows])
    done = 0
    requests = 0

    def scored(variant: str, batch: Sequence[Example]) -> Any:
        nonlocal done
        base = done

        def cb(d: int, _t: int, _label: str) -> None:
            if progress is not None:
                progress(base + d, total, variant)

        nonlocal requests
        out = score_rows(
            model, batch, scoring=scoring, batch_rows=batch_rows, chat=chat, progress=cb
        )
        done += len(batch)
        requests += out.requests
        return out

    prepared = redactions if redactions is not None else redact_classes(rows, classes)
    if prepared.names != tuple(names):
        raise ConfigError(
            f"redactions: prepared for classes {list(prepared.names)}, but classes are {names}"
        )
    outcomes = [o for _, o in prepared.scored]
    total = len(rows) * (1 + len(outcomes))
    # Count this run's calls only (a CachedModel's counters accumulate over its life);
    # an uncached model answers every request.
    calls_before = dict(getattr(model, "calls", {}))
    logger.info("scoring %d rows x %d variants (%s)", len(rows), 1 + len(classes), scoring)
    orig = scored("original", rows)
    s0 = np.asarray(orig.scores)
    variants = [_variant("original", None, y, groups, orig, s0, None, seed=seed, n_boot=n_boot)]
    for cls, outcome in prepared.scored:
        logger.info(
            "%s: %d replacements in %d rows", cls.name, outcome.replacements, outcome.rows_affected
        )
        res = scored(cls.name, outcome.examples)
        variants.append(
            _variant(
                cls.name, cls.placeholder, y, groups, res, s0, outcome, seed=seed, n_boot=n_boot
            )
        )
    after = getattr(model, "calls", None)
    if after is None:
        calls = {"made": requests, "cached": 0}
    else:
        calls = {k: int(after[k]) - int(calls_before.get(k, 0)) for k in ("made", "cached")}
    return RedactionResult(
        variants=variants,
        row_ids=tuple(ex.id for ex in rows),
        labels=tuple(int(v) for v in y),
        groups=tuple(groups.tolist()),
        scoring=scoring,
        model=model.identity,
        calls=calls,
        residual_check={
            "method": "substring",
            "values_checked": sum(o.checked_values for o in outcomes),
            "residuals": sum(o.residuals for o in outcomes),
            "refused": {o.name: o.residuals for o in prepared.refused},
        },
        fallbacks=tuple(_fallbacks(variants, len(rows)) + _refusals(prepared.refused)),
        examples=tuple(
            ex
            for cls, o in prepared.scored
            if (ex := redaction_example(rows, o.examples, cls.name)) is not None
        ),
    )


def excerpt_pair(
    before: str, after: str, *, context: int = 1, max_lines: int = 16
) -> tuple[str, str]:
    """The changed lines of two texts with ``context`` lines around each change, at most
    ``max_lines`` lines a side (skipped stretches shown as ``…``)."""
    from difflib import SequenceMatcher

    a, b = before.splitlines(), after.splitlines()
    keep_a: set[int] = set()
    keep_b: set[int] = set()
    for tag, i1, i2, j1, j2 in SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag != "equal":
            keep_a.update(range(max(0, i1 - context), min(len(a), i2 + context)))
            keep_b.update(range(max(0, j1 - context), min(len(b), j2 + context)))

    def cut(lines: list[str], keep: set[int]) -> str:
        out, last = [], -1
        for i in sorted(keep)[:max_lines]:
            if i != last + 1:
                out.append("…")
            out.append(lines[i])
            last = i
        if last < len(lines) - 1:
            out.append("…")
        return "\n".join(out)

    return cut(a, keep_a), cut(b, keep_b)


def redaction_example(
    rows: Sequence[Example], redacted: Sequence[Example], name: str
) -> dict[str, Any] | None:
    """The first row whose model input the class changed, as ``{variant, row, before,
    after}`` excerpts of its changed lines (``None`` when the class changed no row)."""
    for ex, red in zip(rows, redacted, strict=True):
        before, after = model_input(ex), model_input(red)
        if before != after:
            b, a = excerpt_pair(before, after)
            return {"variant": name, "row": ex.id, "before": b, "after": a}
    return None


def _fallbacks(variants: Sequence[VariantResult], n_rows: int) -> list[Fallback]:
    """Substitutions the run made: invalid answers scored as the fixed invalid score, and
    classes that matched nothing (their variant repeats the original)."""
    out: list[Fallback] = []
    for v in variants:
        invalid = round((1.0 - v.valid_rate) * n_rows)
        if invalid:
            record_fallback(
                out,
                Fallback(
                    kind="other",
                    what=f"redaction.{v.name}.invalid_answers",
                    detail=f"answers the parser could not read were scored {INVALID_SCORE}",
                    count=invalid,
                ),
            )
        if v.delta is not None and v.replacements == 0:
            record_fallback(
                out,
                Fallback(
                    kind="empty_pool",
                    what=f"redaction.{v.name}",
                    detail="the class matched nothing in these rows, so its variant repeats "
                    "the original",
                    count=0,
                ),
            )
    return out


def _variant(
    name: str,
    placeholder: str | None,
    y: np.ndarray,
    groups: np.ndarray,
    res: Any,
    s0: np.ndarray,
    outcome: Any,
    *,
    seed: int,
    n_boot: int,
) -> VariantResult:
    s = np.asarray(res.scores, dtype=float)
    ci = bootstrap_auroc(y, s, n_boot=n_boot, seed=seed)
    by_group = _by_group(y, groups, s)
    if outcome is None:
        delta = delta_ci = p = None
        by_group_delta: dict[str, float] = {}
    else:
        d = paired_bootstrap_auroc_delta(y, s0, s, n_boot=n_boot, seed=seed)
        delta, delta_ci = d.estimate, (d.low, d.high)
        p = paired_permutation_auroc(y, s0, s, n_perm=n_boot, seed=seed)
        base = _by_group(y, groups, s0)
        by_group_delta = {g: base[g] - by_group[g] for g in by_group}
    return VariantResult(
        name=name,
        placeholder=placeholder,
        auroc=ci.estimate,
        ci95=(ci.low, ci.high),
        delta=delta,
        delta_ci95=delta_ci,
        p_value=p,
        by_group=by_group,
        by_group_delta=by_group_delta,
        replacements=outcome.replacements if outcome else 0,
        replacements_by_location=(
            dict(outcome.by_location) if outcome else dict.fromkeys(LOCATIONS, 0)
        ),
        rows_affected=outcome.rows_affected if outcome else 0,
        distinct_values=outcome.distinct_values if outcome else 0,
        residuals=outcome.residuals if outcome else 0,
        valid_rate=res.valid_rate,
        option_mass=res.mean_option_mass,
        scores=tuple(float(v) for v in s),
    )

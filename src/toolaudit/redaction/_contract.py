"""The redaction audit as an :class:`~toolaudit.audits.Audit`: ``redaction.json`` typed,
and the demo run (controlled benchmark, controlled frozen model)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, PrivateAttr

from toolaudit.audits import AuditResult, ProgressFn, relaxed_settings
from toolaudit.errors import ConfigError, check_choice, check_min
from toolaudit.redaction._study import RedactionStudyConfig, run_study
from toolaudit.report import Fallback, Finding, Section

DEMO_SCALE = 0.05
# The demo's reductions (issue 16: the whole demo within 10 minutes on 2 cores): the
# dependence finding needs pdb_id and its peptide control only.
DEMO_CLASSES = ("pdb_id", "peptide")
DEMO_N_BOOT = 500


class VariantRow(BaseModel):
    """One variant of ``redaction.json`` (DESIGN.md keys plus the audit's extras)."""

    model_config = ConfigDict(extra="forbid")

    name: str
    placeholder: str | None
    auroc: float | None
    ci95: list[float | None]
    delta: float | None
    delta_ci95: list[float | None] | None
    p_value: float | None
    by_group: dict[str, float | None]
    by_group_delta: dict[str, float | None]
    replacements: int
    replacements_by_location: dict[str, int]
    rows_affected: int
    distinct_values: int
    residuals: int
    valid_rate: float | None
    option_mass: float | None


class RedactionResults(AuditResult):
    """``redaction.json``: variants on the same rows, model calls, the classes applied and
    the residual check (``residuals`` counts recorded values found again by substring),
    and per class one prompt before and after redaction (``examples``: the changed lines
    of the first row it changed)."""

    results_file: ClassVar[str] = "redaction.json"

    variants: list[VariantRow]
    calls: dict[str, int]
    model: str
    scoring: str
    invalid_score: float
    rows: int
    positives: int
    groups: dict[str, dict[str, int]]
    classes: list[dict[str, Any]]
    residual_check: dict[str, Any] = {}
    examples: list[dict[str, Any]] = []

    _run_calls: dict[str, int] | None = PrivateAttr(default=None)

    @property
    def run_calls(self) -> dict[str, int] | None:
        """This invocation's model calls, ``{"made": ..., "cached": ...}``: not in the
        file, because a resumed run and an uninterrupted one differ in them (the run log
        and the terminal show them); ``None`` for a result read back from a file."""
        return None if self._run_calls is None else dict(self._run_calls)

    def _with_run_calls(self, calls: dict[str, int]) -> RedactionResults:
        self._run_calls = {k: int(calls.get(k, 0)) for k in ("made", "cached")}
        return self


@dataclass(frozen=True, slots=True)
class RedactionConfig:
    """The demo configuration: the controlled benchmark at ``scale``, the controlled
    frozen model trained on its C0 rows, scored on the test split with ``scoring``;
    ``classes`` picks among the default token classes by name (``None``: all of them),
    ``relaxed`` lists the settings the demo reduced (recorded in ``meta.fallbacks``)."""

    scale: float = DEMO_SCALE
    scoring: str = "options"
    n_boot: int = 2000
    seed: int = 0
    classes: tuple[str, ...] | None = None
    strength: float | None = None
    relaxed: tuple[Fallback, ...] = ()

    def __post_init__(self) -> None:
        from toolaudit.datasets import validate_scale, validate_strength
        from toolaudit.redaction._scoring import SCORINGS

        validate_scale(self.scale)
        if self.strength is not None:
            validate_strength(self.strength)
        check_choice("scoring", self.scoring, SCORINGS)
        check_min("n_boot", self.n_boot, 1)
        check_min("seed", self.seed, 0)


def controlled_model_identity(pipeline: object, *, scale: float, seed: int) -> str:
    """The cache identity of the controlled model trained on the demo data: the data's
    scale and seed plus a digest of the fitted pipeline, so a changed trainer never reads
    another model's cached answers."""
    import hashlib
    import pickle

    digest = hashlib.sha256(pickle.dumps(pipeline, protocol=4)).hexdigest()[:16]
    return f"sklearn:controlled-tcr-shortcut@scale={scale},seed={seed},sha256={digest}"


def dependence_finding(
    result: RedactionResults, *, target: str = "pdb_id", control: str = "peptide"
) -> Finding | None:
    """Does the frozen model depend on ``target``? Its ΔA = A_orig − A_redacted interval
    must lie wholly above 0 (performance lost) while the ``control`` class's ΔA interval
    reaches 0.

    Verdicts: ``dependence`` (target drops, control holds), ``nonspecific_drop`` (both
    drop), ``no_dependence`` (target's interval reaches 0 while the original ranks above
    chance), ``not_informative`` (target's interval reaches 0 and the original AUROC's
    interval includes 0.5: a model at chance can show no dependence), ``not_estimable``
    (fewer than half of the original's, the target's or the control's answers could be
    read, so the AUROCs rank the fixed invalid score); ``None`` when either variant is
    missing.
    """
    from toolaudit.redaction._scoring import unreadable

    rows = {v.name: v for v in result.variants}
    t, c = rows.get(target), rows.get(control)
    if t is None or c is None or t.delta is None:
        return None

    def drops(v: VariantRow) -> bool:
        iv = v.delta_ci95 or [None, None]
        return iv[0] is not None and iv[0] > 0

    orig = rows.get("original")
    civ0 = (orig.ci95 if orig is not None else None) or [None, None]
    lo0, hi0 = civ0[0], civ0[1]
    # At chance when the interval includes 0.5 (or is undefined: None or NaN).
    chance = lo0 is None or hi0 is None or not (lo0 > 0.5 or hi0 < 0.5)
    if not drops(t):
        verdict = "not_informative" if chance else "no_dependence"
    else:
        verdict = "nonspecific_drop" if drops(c) else "dependence"
    rates = {v.name: v.valid_rate for v in (orig, t, c) if v is not None}
    if any(unreadable(r) for r in rates.values()):
        verdict = "not_estimable"
    civ = c.delta_ci95 or [None, None]
    versus = f"{control} ΔA {c.delta:.3f}" if c.delta is not None else f"{control} ΔA undefined"
    if None not in civ:
        versus += f" [{civ[0]:.3f}, {civ[1]:.3f}]"
    tiv = t.delta_ci95 or [None, None]
    return Finding(
        name="redaction.dependence",
        verdict=verdict,
        value=t.delta,
        interval=(tiv[0], tiv[1]),
        level=0.95,
        test="paired bootstrap of ΔA",
        p_value=t.p_value,
        subject=f"{target} redacted (AUROC {t.auroc:.3f})" if t.auroc is not None else target,
        details={"metric": "ΔA", "versus": versus, "control_delta": c.delta,
                 "control_delta_ci95": list(civ), "original_ci95": list(civ0),
                 "valid_rates": rates},
    )  # fmt: skip


class RedactionAudit:
    """Token-class redaction with frozen-model re-evaluation."""

    name = "redaction"
    title = "Redaction audit (controlled benchmark)"
    result_model = RedactionResults

    def demo_config(self, *, seed: int, data_root: Path | None) -> RedactionConfig:
        """The controlled benchmark at scale 0.05, only the pdb_id redaction and its
        peptide control (:data:`DEMO_CLASSES`) and fewer bootstrap replicates
        (:data:`DEMO_N_BOOT`), each reduction a ``relaxed_parameter`` fallback;
        ``data_root`` is unused."""
        from toolaudit.datasets import SMALL_STRENGTH, strength_fallback

        default = RedactionConfig()
        relaxed = relaxed_settings(
            "redaction",
            {
                "n_boot": (DEMO_N_BOOT, default.n_boot),
                "classes": (DEMO_CLASSES, default.classes),
            },
        )
        planted = strength_fallback(SMALL_STRENGTH)
        if planted is not None:
            relaxed = (*relaxed, planted)
        return RedactionConfig(seed=seed, n_boot=DEMO_N_BOOT, classes=DEMO_CLASSES,
                               strength=SMALL_STRENGTH, relaxed=relaxed)  # fmt: skip

    def run(
        self,
        config: RedactionConfig | RedactionStudyConfig,
        *,
        out_dir: Path,
        progress: ProgressFn | None = None,
    ) -> RedactionResults:
        """A :class:`RedactionStudyConfig` runs on the user's data and model
        (:func:`run_study`). The demo's :class:`RedactionConfig` trains the controlled
        model, redacts each default class and re-scores; it writes the per-row scores to
        ``out_dir/redaction_scores.jsonl`` and caches model answers in
        ``out_dir/redaction_cache.sqlite``."""
        if isinstance(config, RedactionStudyConfig):
            doc, calls = run_study(config, Path(out_dir), progress=progress)
            return RedactionResults.from_payload(doc)._with_run_calls(calls)
        from toolaudit.datasets import STRENGTH, make_tcr_shortcut
        from toolaudit.models import CachedModel, SklearnModel, train_controlled_model
        from toolaudit.redaction._audit import run_redaction, select_rows
        from toolaudit.redaction._registry import default_classes
        from toolaudit.redaction._report import result_payload, write_scores
        from toolaudit.report import run_metadata

        strength = STRENGTH if config.strength is None else config.strength
        examples = make_tcr_shortcut(scale=config.scale, seed=config.seed, strength=strength)
        if progress is not None:
            progress(0, 1, "training the controlled frozen model on C0")
        pipe = train_controlled_model(examples, seed=config.seed)
        identity = controlled_model_identity(pipe, scale=config.scale, seed=config.seed)
        model = CachedModel(
            SklearnModel.from_pipeline(pipe, identity=identity),
            Path(out_dir) / "redaction_cache.sqlite",
        )
        rows = select_rows(examples, eval_filter={"split": ["test"]})
        classes = default_classes(examples)
        if config.classes is not None:
            unknown = sorted(set(config.classes) - {c.name for c in classes})
            if unknown:
                raise ConfigError.invalid("classes", [c.name for c in classes], unknown[0])
            classes = [c for c in classes if c.name in config.classes]
        result = run_redaction(rows, model, classes=classes, scoring=config.scoring,  # type: ignore[arg-type]
                               seed=config.seed, n_boot=config.n_boot, progress=progress)  # fmt: skip
        meta = run_metadata(
            command="toolaudit demo (redaction)",
            seed=config.seed,
            config={"dataset": "tcr-shortcut", "scale": config.scale, "model": identity,
                    "scoring": config.scoring, "eval": "split=test",
                    "classes": [c.name for c in classes], "n_boot": config.n_boot,
                    "strength": config.strength},
            fallbacks=config.relaxed,
        )  # fmt: skip
        write_scores(Path(out_dir), result, name="redaction_scores.jsonl")
        doc = result_payload(result, classes, meta)
        return RedactionResults.from_payload(doc)._with_run_calls(result.calls)

    def headline(self, result: RedactionResults) -> Finding | None:
        """pdb_id vs the peptide control (:func:`dependence_finding`)."""
        return dependence_finding(result)

    def sections(self, result: RedactionResults) -> list[Section]:
        """Tables 7 and 8, validity, the ΔA plot and the per-variant findings."""
        from toolaudit.redaction._report import report_sections

        sections = report_sections(result, title=self.title)
        orig = next(v for v in result.variants if v.name == "original")
        redacted = [v.name for v in result.variants if v.delta is not None]
        sections[0].blocks.insert(
            0,
            f"Controlled tcr-shortcut benchmark at scale {result.meta.config.get('scale')} "
            f"(seed {result.meta.seed}); the frozen model is a character n-gram logistic "
            f"regression trained on C0/train of the same data, evaluated on the "
            f"{result.rows} test rows of {', '.join(sorted(orig.by_group))}. Redacted "
            f"classes: {', '.join(redacted)}.",
        )
        return sections


REDACTION_AUDIT = RedactionAudit()

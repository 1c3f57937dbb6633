"""The leakage audit (PT2D) as an :class:`~toolaudit.audits.Audit`: ``leakage.json``
typed, and the demo run on the controlled benchmark."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict

from toolaudit.audits import AuditResult, ProgressFn, relaxed_settings, result_meta
from toolaudit.leakage._audit import run_leakage
from toolaudit.leakage._config import DilutionConfig, LeakageConfig
from toolaudit.leakage._features import FEATURE_SETS
from toolaudit.leakage._report import leakage_sections
from toolaudit.leakage._wording import (
    first_screen_label,
    headline_reading,
    strongest_tool_sentence,
)
from toolaudit.report import Fallback, Finding, Section
from toolaudit.tokens import TokenClassRecord
from toolaudit.traces import DEFAULT_THRESHOLD, Example, FieldMapping

# The demo's sizes (issue 16: the whole demo within 10 minutes on 2 cores).
DEMO_N_BOOT = 300
DEMO_DILUTION = DilutionConfig(k_values=(0, 2, 5), n_seeds=1)
# The seed's decisive feature set (Table 1: tool 3 stands out with character n-grams).
DEMO_FEATURES = (FEATURE_SETS["char_wb_3_5"],)


@dataclass(frozen=True, slots=True)
class LeakageAuditConfig:
    """The examples to audit (``files``: result or example files read through
    ``toolaudit.traces``, episode formats labelled by reward >= ``threshold``, each file
    read through ``mapping`` when given; ``data``: an Example JSONL; neither: the
    controlled benchmark generated at ``scale`` into the output folder when absent), the
    audit's own settings, the settings the demo relaxed (``relaxed``: recorded in
    ``meta.fallbacks``) and the command recorded in ``meta.command``."""

    leakage: LeakageConfig = field(default_factory=LeakageConfig)
    data: Path | None = None
    files: tuple[Path, ...] = ()
    scale: float = 0.05
    strength: float | None = None
    relaxed: tuple[Fallback, ...] = ()
    threshold: float = DEFAULT_THRESHOLD
    mapping: FieldMapping | None = None
    command: str = "toolaudit demo (leakage)"

    def __post_init__(self) -> None:
        from toolaudit.datasets import validate_scale, validate_strength

        validate_scale(self.scale)
        if self.strength is not None:
            validate_strength(self.strength)


class ScopeRow(BaseModel):
    """One row of the scope x feature-set table (DESIGN.md keys typed)."""

    model_config = ConfigDict(extra="allow")

    scope: str
    features: str
    auroc: float | None
    ci95: list[float | None]
    by_group: dict[str, Any]


class Provenance(BaseModel):
    """Top n-grams with their fields, and the candidate token classes they form."""

    model_config = ConfigDict(extra="allow")

    features: list[dict[str, Any]]
    classes: list[TokenClassRecord]


class LeakageResults(AuditResult):
    """``leakage.json``."""

    results_file: ClassVar[str] = "leakage.json"

    scopes: list[ScopeRow]
    provenance: Provenance
    prefix_lookup: dict[str, Any] | None
    dilution: dict[str, Any] | None
    partition: dict[str, Any]
    tools: list[str]
    warnings: list[str] = []
    data: dict[str, Any] | None = None
    verdict: dict[str, Any] | None = None


def top_tool_finding(result: LeakageResults, *, features: str = "char_wb_3_5") -> Finding | None:
    """The strongest single tool against the full trace for one feature set."""
    rows = [r for r in result.scopes if r.features == features and r.auroc is not None]
    tools = [r for r in rows if r.scope != "full"]
    if not tools:
        return None
    best = max(tools, key=lambda r: r.auroc or 0.0)
    full = next((r.auroc for r in rows if r.scope == "full"), None)
    lo, hi = (best.ci95 + [None, None])[:2]
    verdict = "stands_out" if lo is not None and full is not None and lo > full else "within"
    return Finding(
        name="leakage.top_tool",
        verdict=verdict,
        value=best.auroc,
        interval=(lo, hi),
        level=0.95,
        test="stratified bootstrap",
        subject=best.scope,
        details={"full": full, "features": features},
    )


def top_tool_sentence(finding: Finding) -> str:
    """The report sentence of :func:`top_tool_finding`."""
    lo, hi = finding.interval or (None, None)
    full = finding.details.get("full")
    ci = f" [{lo:.3f}, {hi:.3f}]" if lo is not None and hi is not None else ""
    relation = (
        "its 95% interval lies wholly above"
        if finding.verdict == "stands_out"
        else "its 95% interval does not lie wholly above"
    )
    full_text = f"{full:.3f}" if isinstance(full, float) else "undefined"
    return (
        f"With {finding.details.get('features')} features the strongest single tool is "
        f"{finding.subject} (AUROC {finding.value:.3f}{ci}); {relation} the full trace's "
        f"point estimate, {full_text} (this file has no verdict block, which would test "
        "the paired difference)."
    )


def _strongest_tool(result: LeakageResults) -> str | None:
    """The section's sentence on the strongest single tool: from the verdict rule's
    comparisons (its family-wise intervals, against chance and against the full trace)
    when the result has them, in the feature set the verdict turned on; none when the
    verdict sentence already states that tool; else :func:`top_tool_sentence`."""
    evidence = (result.verdict or {}).get("evidence") or {}
    details = evidence.get("details") or {}
    if details.get("comparisons"):
        feats = [r.features for r in result.scopes]
        reading = headline_reading(details, evidence.get("subject"))
        chosen = reading.features if reading is not None else details.get("features")
        focus = "char_wb_3_5" if "char_wb_3_5" in feats or not feats else feats[0]
        features = chosen if chosen in feats else focus
        if reading is not None and reading.kind == "scope" and features == reading.features:
            return None  # the verdict's first sentence states this very figure
        return strongest_tool_sentence(details, str(features))
    finding = top_tool_finding(result)
    return top_tool_sentence(finding) if finding is not None else None


def verdict_finding(verdict: dict[str, Any]) -> Finding:
    """The ``verdict`` block of ``leakage.json`` as a :class:`Finding` (keys it lacks stay
    empty; unknown keys go to ``details``)."""
    known = {"verdict", "kind", "value", "auroc", "interval", "ci95", "subject", "tool",
             "carrier", "p_value", "n", "evidence"}  # fmt: skip
    iv = verdict.get("interval", verdict.get("ci95"))
    value = verdict.get("value", verdict.get("auroc"))
    subject = verdict.get("subject", verdict.get("tool", verdict.get("carrier")))
    metric = "AUROC"
    if value is None:  # the block run_leakage writes: the reading it is headlined with
        evidence = verdict.get("evidence") or {}
        reading, label = first_screen_label(verdict)
        if reading is not None:
            # the figure the section's verdict sentence states first, labelled as the
            # quantity it is (scope, prefix-lookup or presence-control AUROC)
            value, iv, subject, metric = (
                reading.auroc,
                [reading.low, reading.high],
                label,
                reading.metric,
            )
            if "family_level" in (evidence.get("details") or {}):
                # the rule's intervals: Bonferroni over its comparisons, 95% jointly
                verdict = {**verdict, "n": verdict.get("n", evidence.get("n")),
                           "family_wise": True}  # fmt: skip
    interval = (iv[0], iv[1]) if isinstance(iv, list | tuple) and len(iv) == 2 else None
    details = {k: v for k, v in verdict.items() if k not in known}
    details.setdefault("metric", metric)
    return Finding(
        name="leakage.verdict",
        verdict=str(verdict.get("verdict", verdict.get("kind"))),
        value=value if isinstance(value, int | float) else None,
        interval=interval,
        level=0.95 if interval is not None else None,
        p_value=verdict.get("p_value"),
        n=verdict.get("n"),
        subject=str(subject) if subject is not None else None,
        details=details,
    )


class LeakageAudit:
    """PT2D: per-tool TF-IDF decomposition, provenance, prefix lookup and dilution."""

    name = "leakage"
    title = "Leakage audit (PT2D)"
    result_model = LeakageResults

    def demo_config(self, *, seed: int, data_root: Path | None) -> LeakageAuditConfig:
        """The controlled benchmark at scale 0.05 with fewer bootstrap replicates and a
        smaller dilution grid (:data:`DEMO_N_BOOT`, :data:`DEMO_DILUTION`), each recorded
        as a ``relaxed_parameter`` fallback; ``data_root`` is unused."""
        from toolaudit.datasets import SMALL_SCALE, SMALL_STRENGTH, strength_fallback

        default = LeakageConfig()
        dilution = default.dilution or DilutionConfig()
        cfg = LeakageConfig(
            seed=seed, n_boot=DEMO_N_BOOT, dilution=DEMO_DILUTION, features=DEMO_FEATURES
        )
        relaxed = relaxed_settings(
            "leakage",
            {
                "n_boot": (cfg.n_boot, default.n_boot),
                "features": (
                    tuple(f.name for f in DEMO_FEATURES),
                    tuple(f.name for f in default.features),
                ),
                "dilution.k_values": (DEMO_DILUTION.k_values, dilution.k_values),
                "dilution.n_seeds": (DEMO_DILUTION.n_seeds, dilution.n_seeds),
            },
        )
        planted = strength_fallback(SMALL_STRENGTH)
        if planted is not None:
            relaxed = (*relaxed, planted)
        return LeakageAuditConfig(
            leakage=cfg, scale=SMALL_SCALE, strength=SMALL_STRENGTH, relaxed=relaxed
        )

    def run(
        self, config: LeakageAuditConfig, *, out_dir: Path, progress: ProgressFn | None = None
    ) -> LeakageResults:
        """Audit the examples (generating the controlled benchmark when needed)."""
        from toolaudit.datasets import DATASET_NAME, STRENGTH, write_tcr_shortcut
        from toolaudit.leakage._inputs import load_files
        from toolaudit.traces import read_jsonl

        data = config.data
        if config.files:
            dilution = config.leakage.dilution
            examples, shown = load_files(
                config.files,
                threshold=config.threshold,
                mapping=config.mapping,
                carrier=dilution.carrier if dilution is not None else None,
            )
        else:
            if data is None:
                data = Path(out_dir) / DATASET_NAME / "examples.jsonl"
                if not data.exists():
                    write_tcr_shortcut(
                        data.parent,
                        scale=config.scale,
                        seed=config.leakage.seed,
                        strength=STRENGTH if config.strength is None else config.strength,
                    )
            examples = list(read_jsonl(data, Example))
            name = data.relative_to(out_dir) if data.is_relative_to(out_dir) else data
            shown = {"files": [str(name)], "examples": len(examples)}
            if config.data is None:  # generated here: say how
                shown.update(scale=config.scale, strength=config.strength)
        result = run_leakage(examples, config.leakage, progress=progress)
        payload = result.as_json()
        payload["data"] = shown
        fallbacks: list[Fallback] = [*getattr(result, "fallbacks", []), *config.relaxed]
        meta = result_meta(
            command=config.command,
            seed=config.leakage.seed,
            config=config.leakage.as_json(),
            fallbacks=fallbacks,
        )
        return LeakageResults.model_validate(
            {**payload, "meta": meta, "schema_version": meta.schema_version}
        )

    def headline(self, result: LeakageResults) -> Finding | None:
        """The ``verdict`` block when the result has one, else the strongest single tool
        against the full trace (:func:`top_tool_finding`)."""
        if isinstance(result.verdict, dict) and ({"verdict", "kind"} & set(result.verdict)):
            return verdict_finding(result.verdict)
        finding = top_tool_finding(result)
        if finding is None:
            return None
        full = finding.details.get("full")
        versus = f"full trace {full:.3f}" if isinstance(full, float) else "full trace undefined"
        details = {**finding.details, "metric": "AUROC", "versus": versus}
        return finding.model_copy(update={"details": details})

    def sections(self, result: LeakageResults) -> list[Section]:
        """The scope table, per-group table, provenance, prefix lookup and dilution."""
        doc = result.model_dump(mode="python", exclude_unset=True)
        sections = leakage_sections(doc, title=self.title)
        data = result.data or {}
        files = ", ".join(data.get("files", []))
        intro = f"Examples audited: {data.get('examples', '?')} ({files})."
        strongest = _strongest_tool(result)
        if strongest:
            intro += " " + strongest
        sections[0].blocks.insert(0, intro)
        return sections


#: The real-data demo part: the two airline result files of docs/leakage.md.
AIRLINE_PAIR = (
    "airline__gpt-4.1__user-gpt-4.1__test20x1.json",
    "airline__qwen2.5-7b__user-gpt-4.1__50x1.json",
)


class LeakageRealResults(LeakageResults):
    """``leakage_tau2.json``: the leakage audit on public tau2 result files."""

    results_file: ClassVar[str] = "leakage_tau2.json"


class LeakageRealAudit(LeakageAudit):
    """The leakage audit on real agent trajectories: the shared tau2 airline results
    (label = the episode's reward), when the data root has them."""

    name = "leakage_tau2"
    title = "Leakage audit on real trajectories (tau2 airline)"
    result_model = LeakageRealResults

    def demo_config(self, *, seed: int, data_root: Path | None) -> LeakageAuditConfig:
        """The airline pair (:data:`AIRLINE_PAIR`) with every feature set and the
        demo's bootstrap size and dilution grid (each a recorded ``relaxed_parameter``);
        no files when the data root lacks them (the run then records a
        ``skipped_part``)."""
        sim = Path(data_root) / "tau2" / "simulations" if data_root else None
        files = tuple(sim / f for f in AIRLINE_PAIR) if sim else ()
        if not files or not all(f.exists() for f in files):
            files = ()
        default = LeakageConfig()
        cfg = LeakageConfig(seed=seed, n_boot=DEMO_N_BOOT, dilution=DEMO_DILUTION)
        dilution = default.dilution or DilutionConfig()
        relaxed = relaxed_settings(
            self.name,
            {
                "n_boot": (cfg.n_boot, default.n_boot),
                "dilution.k_values": (DEMO_DILUTION.k_values, dilution.k_values),
                "dilution.n_seeds": (DEMO_DILUTION.n_seeds, dilution.n_seeds),
            },
        )
        return LeakageAuditConfig(leakage=cfg, files=files, relaxed=relaxed)

    def run(
        self, config: LeakageAuditConfig, *, out_dir: Path, progress: ProgressFn | None = None
    ) -> LeakageResults:
        """Audit the files; without them an empty result with a ``skipped_part``."""
        if config.files:
            done = super().run(config, out_dir=out_dir, progress=progress)
            return LeakageRealResults.model_validate(done.model_dump(mode="python"))
        skipped = Fallback(
            kind="skipped_part",
            what="leakage_tau2.files",
            detail="the tau2 airline result files (" + ", ".join(AIRLINE_PAIR) + ") were "
            "not found under the data root; the leakage audit on real trajectories was skipped",
        )
        meta = result_meta(command="toolaudit demo (leakage_tau2)", seed=config.leakage.seed,
                           config=config.leakage.as_json(),
                           fallbacks=[skipped])  # fmt: skip
        return LeakageRealResults.new(
            meta, scopes=[], provenance=Provenance(features=[], classes=[]), prefix_lookup=None,
            dilution=None, partition={}, tools=[],
        )  # fmt: skip

    def headline(self, result: LeakageResults) -> Finding | None:
        """The verdict, or none when the part was skipped."""
        return super().headline(result) if result.scopes else None

    def sections(self, result: LeakageResults) -> list[Section]:
        """As the leakage audit's; a one-line section when the part was skipped."""
        if result.scopes:
            return super().sections(result)
        return [Section(self.title).text("Skipped: the tau2 airline files are not present.")]


LEAKAGE_AUDIT = LeakageAudit()
LEAKAGE_REAL_AUDIT = LeakageRealAudit()

"""The probe audit as an :class:`~toolaudit.audits.Audit`: the controlled ResearchOps
study (``probe/probe.json``) and the paired comparison of two real result files
(``probe/compare_retail_test40.json``), each a registered audit."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from toolaudit.audits import AuditResult, ProgressFn, ResultRecord, result_meta
from toolaudit.errors import check_min
from toolaudit.probes._seam import REAL_HARNESSES
from toolaudit.probes.analysis._compare import check_pass_threshold, compare_files
from toolaudit.probes.analysis._findings import attribution
from toolaudit.probes.reports._study import RETAIL_PAIR, compare_section, study_section
from toolaudit.probes.study._config import ProbeStudyConfig, run_study
from toolaudit.probes.study._inspect import HarnessStudyConfig
from toolaudit.probes.study._probe import analyze_study, check_analysis, run_probe_study
from toolaudit.probes.study._tau2 import Tau2StudyConfig
from toolaudit.report import Fallback, Finding, Section, record_fallback

Num = int | float | None


@dataclass(frozen=True, slots=True)
class ProbeConfig:
    """The controlled study: seeds per cell, the equivalence margin, bootstrap size, and
    what the demo left out (``relaxed``: recorded in ``meta.fallbacks``)."""

    n_seeds: int = 3
    margin: float = 0.10
    n_boot: int = 2000
    seed: int = 0
    relaxed: tuple[Fallback, ...] = ()

    def __post_init__(self) -> None:
        check_min("n_seeds", self.n_seeds, 1)
        check_analysis(margin=self.margin, seed=self.seed, n_boot=self.n_boot)


class ProbeCell(ResultRecord):
    """One (policy, condition) cell; the DESIGN.md metrics are typed, the rest loose."""

    policy: str
    condition: str
    vrg: Num
    vrg_rescored: Num = None
    msr: Num = None
    mtr: Num = None
    ptd: Num = None
    behavior_changed_rate: Num = None


class ProbeResult(AuditResult):
    """``probe.json`` of the controlled study."""

    results_file: ClassVar[str] = "probe/probe.json"

    cells: list[ProbeCell]
    policies: list[dict[str, Any]]
    repeat_control: list[dict[str, Any]]
    selection: dict[str, Any] | None = None
    judge: dict[str, Any] | None = None
    findings: dict[str, Any]
    records: int
    tasks: int
    policies_run: list[str]
    conditions: list[str]
    harness: str | None = None
    noop_baseline: dict[str, Any] | None = None
    positive_controls: list[dict[str, Any]] | None = None


class ProbeAudit:
    """The controlled probe study on the built-in ResearchOps suite."""

    name = "probe"
    title = "Probe audit: controlled ResearchOps study"
    result_model = ProbeResult

    def demo_config(self, *, seed: int, data_root: Path | None) -> ProbeConfig:
        """The full scripted study (three seeds per cell); the LLM agent is the
        ``probe_llm`` part. ``data_root`` is unused."""
        return ProbeConfig(seed=seed)

    def run(
        self,
        config: ProbeConfig | ProbeStudyConfig | HarnessStudyConfig | Tau2StudyConfig,
        *,
        out_dir: Path,
        progress: ProgressFn | None = None,
    ) -> ProbeResult:
        """A :class:`ProbeStudyConfig` (``probe run``) runs or resumes in ``out_dir``
        itself and is analysed as asked. The demo's :class:`ProbeConfig` runs (or
        resumes) the full scripted study into ``out_dir/probe`` and analyses it."""
        if isinstance(config, ProbeStudyConfig):
            return ProbeResult.from_payload(run_study(config, Path(out_dir), progress=progress))
        if isinstance(config, HarnessStudyConfig):
            from toolaudit.probes.study._inspect import run_harness_study

            doc = run_harness_study(config, Path(out_dir), progress=progress)
            return ProbeResult.from_payload(doc)
        if isinstance(config, Tau2StudyConfig):
            from toolaudit.probes.study._tau2 import run_tau2_study

            return ProbeResult.from_payload(
                run_tau2_study(config, Path(out_dir), progress=progress)
            )
        study = Path(out_dir) / "probe"
        run_probe_study(study, n_seeds=config.n_seeds, seed=config.seed, n_jobs=1,
                        progress=progress)  # fmt: skip
        doc = analyze_study(
            study, margin=config.margin, seed=config.seed, n_boot=config.n_boot, write=False
        )
        extra: list[Fallback] = list(config.relaxed)
        judge = doc.get("judge") or {}
        if judge.get("simulated"):
            record_fallback(
                extra,
                Fallback(
                    kind="simulated_component",
                    what="probe.judge",
                    detail="no judge verdicts were given, so seeded simulated judges over the "
                    "study's records were audited",
                ),
            )
        return ProbeResult.from_payload(doc, extra)

    def headline(self, result: ProbeResult) -> Finding | None:
        """Who caused the careful agent's tool_rename gap: its attribution (the gap vs
        the rescored gap on the same trajectories, and whether actions changed)."""
        return attribution_headline(result, policy="careful", condition="tool_rename")

    def sections(self, result: ProbeResult) -> list[Section]:
        """The study section (gap figure, cells, controls, judge audit)."""
        doc = result.model_dump(mode="python", exclude_unset=True)
        margin = float(result.meta.config.get("margin", 0.10))
        if doc.get("harness") in REAL_HARNESSES:
            from toolaudit.probes.reports._harness import harness_section

            return [harness_section(doc, margin=margin)]
        return [study_section(doc, margin=margin)]


def attribution_headline(result: ProbeResult, *, policy: str, condition: str) -> Finding | None:
    """The attribution of one cell's gap as a headline (the gap vs the rescored gap on
    the same trajectories, and whether actions changed); None without that cell."""
    cell = next((c for c in result.cells if c.policy == policy and c.condition == condition), None)
    if cell is None or cell.vrg is None:
        return None
    f = attribution(cell.model_dump(mode="python"))
    rescored = f.details.get("vrg_rescored")
    iv = f.details.get("vrg_rescored_ci95") or [None, None]
    versus = "rescored gap " + (f"{rescored:.3f}" if isinstance(rescored, float) else "undefined")
    if None not in iv:
        versus += f" [{iv[0]:.3f}, {iv[1]:.3f}]"
    changed = f.details.get("behavior_changed_rate")
    versus += f"; actions changed in {changed:.0%} of pairs" if changed is not None else ""
    return f.model_copy(update={"details": {**f.details, "metric": "gap", "versus": versus}})


@dataclass(frozen=True, slots=True)
class ProbeCompareConfig:
    """Two result files compared as B − A over the same tasks: ``paths`` (any two
    files, as ``probe compare`` gives them) or else ``files`` by name under the data
    root's ``tau2/simulations`` (the demo's pair, skipped when absent); the equivalence
    ``margin`` of the 90% interval, the reward counted as a pass (``threshold``), whether
    runs ended early are excluded, and the bootstrap seed."""

    data_root: Path | None = None
    files: tuple[str, str] = RETAIL_PAIR
    seed: int = 0
    paths: tuple[Path, Path] | None = None
    margin: float = 0.10
    threshold: float = 0.5
    exclude_premature: bool = False

    def __post_init__(self) -> None:
        check_analysis(margin=self.margin, seed=self.seed, n_boot=1)
        check_pass_threshold("threshold", self.threshold)


class ProbeCompareResult(AuditResult):
    """``compare_retail_test40.json``: a paired comparison (empty when skipped)."""

    results_file: ClassVar[str] = "probe/compare_retail_test40.json"

    paired_tasks: int | None = None
    delta: float | None = None
    delta_ci95: list[float | None] | None = None
    delta_ci90: list[float | None] | None = None
    equivalence: str | None = None
    mcnemar: dict[str, Any] | None = None


class ProbeCompareAudit:
    """The paired comparison of the two tau2 retail test40 files (base vs fine-tuned)."""

    name = "probe_compare"
    title = "Probe audit: tau2 retail test40, paired"
    result_model = ProbeCompareResult

    def demo_config(self, *, seed: int, data_root: Path | None) -> ProbeCompareConfig:
        """The retail test40 pair under the data root."""
        return ProbeCompareConfig(data_root=data_root, seed=seed)

    def run(
        self, config: ProbeCompareConfig, *, out_dir: Path, progress: ProgressFn | None = None
    ) -> ProbeCompareResult:
        """Compare the pair; the demo's files missing are a recorded ``skipped_part``."""
        if config.paths is not None:
            pa, pb = config.paths
            doc = compare_files(pa, pb, margin=config.margin, threshold=config.threshold,
                                exclude_premature=config.exclude_premature, seed=config.seed)  # fmt: skip
            record = {"a": str(pa), "b": str(pb), "margin": config.margin,
                      "threshold": config.threshold, "exclude_premature": config.exclude_premature}  # fmt: skip
            meta = result_meta(command="probe compare", seed=config.seed, config=record)
            return ProbeCompareResult.new(meta, **doc)
        a, b = config.files
        sim = Path(config.data_root) / "tau2" / "simulations" if config.data_root else None
        cfg = {"a": a, "b": b}
        if sim is None or not all((sim / f).exists() for f in config.files):
            fallbacks: list[Fallback] = []
            record_fallback(
                fallbacks,
                Fallback(
                    kind="skipped_part",
                    what="probe.compare",
                    detail=f"the tau2 retail test40 files were not found under the data root "
                    f"({config.data_root}); the paired comparison was skipped",
                ),
            )
            meta = result_meta(command="probe compare", seed=config.seed, config=cfg,
                               fallbacks=fallbacks)  # fmt: skip
            return ProbeCompareResult.new(meta)
        doc = compare_files(sim / a, sim / b, margin=config.margin, threshold=config.threshold,
                            exclude_premature=config.exclude_premature, seed=config.seed)  # fmt: skip
        meta = result_meta(command="probe compare", seed=config.seed, config=cfg)
        return ProbeCompareResult.new(meta, **doc)

    def headline(self, result: ProbeCompareResult) -> Finding | None:
        """The equivalence verdict of the paired reward difference (None when skipped)."""
        if result.paired_tasks is None or result.equivalence is None:
            return None
        iv = result.delta_ci90 or [None, None]
        a, b = str(result.meta.config.get("a")), str(result.meta.config.get("b"))
        tail = os.path.commonprefix([a[::-1], b[::-1]])[::-1]
        a, b = a[: len(a) - len(tail)] or a, b[: len(b) - len(tail)] or b
        return Finding(
            name="probe.compare.delta",
            verdict=result.equivalence,
            value=result.delta,
            interval=(iv[0], iv[1]),
            level=0.90,
            test="TOST on the paired difference",
            n=result.paired_tasks,
            subject=f"{b} − {a}",
            details={"metric": "reward Δ"},
        )

    def sections(self, result: ProbeCompareResult) -> list[Section]:
        """The comparison section, or nothing when the comparison was skipped."""
        if result.paired_tasks is None:
            return []
        doc = result.model_dump(mode="python", exclude_unset=True)
        return [compare_section(doc, title=self.title)]


PROBE_AUDIT = ProbeAudit()
PROBE_COMPARE_AUDIT = ProbeCompareAudit()

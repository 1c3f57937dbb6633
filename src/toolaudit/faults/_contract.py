"""The faults audit as an :class:`~toolaudit.audits.Audit`: fault readings on retail
tasks with the embedded model, written to ``faults.json``."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from toolaudit.audits import AuditResult, ProgressFn, ResultRecord, relaxed_settings
from toolaudit.faults._replay import ARMS
from toolaudit.faults._run import RETAIL_DIR, FaultsConfig, run_faults
from toolaudit.report import Fallback, Finding, Section

Num = int | float | None

# The demo's size (issue 16: the whole demo within 10 minutes on 2 cores): every arm,
# on few retail tasks, at k = 0..DEMO_K_MAX, with the compact policy.
DEMO_ARMS = ARMS
DEMO_TASKS = 1
DEMO_K_MAX = 0


@dataclass(frozen=True, slots=True)
class FaultsAuditConfig:
    """The run's options (``FaultsConfig``, which also names the domain and data root),
    the settings the demo reduced (``relaxed``: recorded in ``meta.fallbacks``), and
    where under the output folder the resumable rows live (``rows_dir``: the demo keeps
    them in ``faults_run/``; ``faults run`` writes them beside ``faults.json``, ``"."``)."""

    run: FaultsConfig = field(default_factory=FaultsConfig)
    relaxed: tuple[Fallback, ...] = ()
    rows_dir: str = "faults_run"


class FaultRow(ResultRecord):
    """One reading (task, arm, step k); DESIGN.md keys typed, the rest loose."""

    task: str
    arm: str
    k: int
    s0: Num = None
    s1: Num = None
    g: Num = None
    entropy: Num = None
    leading_action: str | None = None
    agrees_reference: bool | None = None
    p_reread: Num = None
    p_write: Num = None
    p_reply: Num = None


class FaultsResult(AuditResult):
    """``faults.json``: rows, skipped tasks, counts and the paired summary."""

    results_file: ClassVar[str] = "faults.json"

    rows: list[FaultRow]
    skipped: list[dict[str, Any]]
    counts: dict[str, Any]
    summary: dict[str, Any]


def _has_retail(data_root: Path | None) -> bool:
    return data_root is not None and Path(data_root).joinpath(*RETAIL_DIR).is_dir()


class FaultsAudit:
    """Fault injection into one tool return, read through the model's probabilities."""

    name = "faults"
    title = "Faults: fault injection into tool returns"
    result_model = FaultsResult

    def demo_config(self, *, seed: int, data_root: Path | None) -> FaultsAuditConfig:
        """The embedded instruct model on :data:`DEMO_TASKS` retail tasks with every arm
        at k = 0..:data:`DEMO_K_MAX` (compact policy), each reduction a
        ``relaxed_parameter`` fallback; or the shipped mini domain (a fallback the run
        records) when no tau2 data is present."""
        has_retail = _has_retail(data_root)
        run = FaultsConfig(
            domain="retail" if has_retail else "mini",
            data_root=str(data_root) if has_retail else None,
            arms=DEMO_ARMS,
            tasks=DEMO_TASKS,
            k_max=DEMO_K_MAX,
            policy="compact" if has_retail else "full",
            seed=seed,
        )
        default = FaultsConfig()
        relaxed = relaxed_settings(
            "faults",
            {
                "tasks": (run.tasks, default.tasks),
                "arms": (run.arms, default.arms),
                "k_max": (run.k_max, default.k_max),
                "policy": (run.policy, default.policy),
            },
        )
        return FaultsAuditConfig(run=run, relaxed=relaxed)

    def run(
        self, config: FaultsAuditConfig, *, out_dir: Path, progress: ProgressFn | None = None
    ) -> FaultsResult:
        """Run (or resume) with the rows in ``out_dir/<rows_dir>``; the stand-in mini
        domain is a fallback recorded by the run itself."""
        rows = Path(out_dir) / config.rows_dir
        payload = run_faults(rows, config=config.run, progress=progress)
        return FaultsResult.from_payload(payload, config.relaxed)

    def headline(self, result: FaultsResult) -> Finding | None:
        """The failed arm at step 0: how many paired tasks' S0 rose over the clean run,
        with the sign test of ΔS0 (None when the summary has no such cell).

        Verdicts: ``s0_rises`` (the sign test, p < 0.05, most tasks up); ``s0_separates``
        (too few tasks for the sign test to reach 0.05, but S0 rose on every one and no
        other arm's ΔS0 reaches the failed arm's smallest: legible on these tasks, not
        yet a tested claim); else ``no_clear_rise``."""
        summary = result.summary
        cells = summary.get("cells") or []
        cell = next((c for c in cells if c.get("arm") == "failed" and c.get("k") == 0), None)
        if cell is None or not cell.get("n"):
            return None
        n, up = int(cell["n"]), int(cell.get("n_ds0_pos", 0))
        p = cell.get("p_sign_ds0")
        p = p if isinstance(p, float) and p == p else None
        sep = (summary.get("s0_separation") or {}).get("per_token") or {}
        details: dict[str, Any] = {"metric": "share of tasks with S0 up", "rises": up}
        if p is not None and p < 0.05 and 2 * up > n:
            verdict = "s0_rises"
        elif (
            up == n
            and 0.5 ** (n - 1) >= 0.05  # the smallest two-sided sign-test p for n tasks
            and sep.get("n_others")
            and sep.get("n_others_inside") == 0
        ):
            verdict = "s0_separates"
            details["other_arms_max_ds0"] = sep.get("others_max")
            details["failed_min_ds0"] = sep.get("failed_min")
        else:
            verdict = "no_clear_rise"
        return Finding(
            name="faults.failed.s0",
            verdict=verdict,
            value=up / n,
            test="sign test of ΔS0",
            p_value=p,
            n=n,
            subject="failed tool return, step 0",
            details=details,
        )

    def sections(self, result: FaultsResult) -> list[Section]:
        """Counts, Table I and Figures 1-2."""
        from toolaudit.faults import report_section

        doc = result.model_dump(mode="python", exclude_unset=True)
        return [report_section(doc, title=self.title)]


FAULTS_AUDIT = FaultsAudit()

"""faults audit: inject one bad tool return and read the model's log-probabilities.

Replays a task's reference actions against the retail database (or reads a recorded
trajectory), replaces the return at the injection site with each arm's payload, and
reads S0 / S1 / G and the next-action distribution at the site and the calls after it
(seed: fault-readings-logprob).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

from toolaudit.faults._contract import FAULTS_AUDIT
from toolaudit.faults._domain import Action, FaultDomain, FaultTask, load_retail_domain, mini_domain
from toolaudit.faults._engine import CachedScorer, NaiveScorer
from toolaudit.faults._readings import ActionDistribution, action_distribution, task_readings
from toolaudit.faults._recorded import load_recorded
from toolaudit.faults._replay import ARMS, first_call_site, make_arms, replay
from toolaudit.faults._retail import READ_TOOLS, REREAD_TOOLS, WRITE_TOOLS, RetailEnvironment
from toolaudit.faults._run import FaultsConfig, analyze, run_faults
from toolaudit.faults._schemas import TOOL_SCHEMAS
from toolaudit.faults._summary import summarize, table_rows

logger = logging.getLogger(__name__)

__all__ = [
    "FAULTS_AUDIT",
    "ARMS",
    "READ_TOOLS",
    "REREAD_TOOLS",
    "TOOL_SCHEMAS",
    "WRITE_TOOLS",
    "Action",
    "ActionDistribution",
    "CachedScorer",
    "FaultDomain",
    "FaultTask",
    "FaultsConfig",
    "NaiveScorer",
    "RetailEnvironment",
    "action_distribution",
    "analyze",
    "demo_sections",
    "first_call_site",
    "load_recorded",
    "load_retail_domain",
    "make_arms",
    "mini_domain",
    "replay",
    "report_section",
    "run_faults",
    "summarize",
    "table_rows",
    "task_readings",
]


def report_section(
    payload: dict[str, Any], *, title: str = "Faults: fault injection into tool returns"
) -> Any:
    """The report section of a ``faults.json`` payload: counts, Table I, Figures 1-2."""
    from toolaudit.faults._summary import figures
    from toolaudit.report import Section

    summary, counts = payload["summary"], payload["counts"]
    clean = summary["clean"]
    sec = Section(title)
    sec.text(
        f"{counts['tasks_scored']} tasks scored, {counts['tasks_skipped']} skipped "
        f"({', '.join(f'{k}: {v}' for k, v in counts['skip_reasons'].items()) or 'none'}). "
        f"Clean G < 0 on {clean['n_g_negative']}/{clean['n']} site returns; clean action "
        f"entropy median {clean['entropy']['median']:.4f} nats, "
        f"{clean['n_entropy_below_headroom']}/{clean['n']} below 0.01 nats."
    )
    failed0 = [c for c in summary["cells"] if c["arm"] == "failed" and c["k"] == 0]
    if failed0:
        c = failed0[0]
        sec.text(
            f"Failed arm at the site: schema-only surprisal S0 differs from clean on "
            f"{c['n_ds0_differs']}/{c['n']} tasks (higher on {c['n_ds0_pos']}); "
            f"G rises on {c['n_dg_pos']}/{c['n']} (sign test p = {c['p_sign_dg']:.3g})."
        )
    header, rows = table_rows(summary)
    sec.table("Table I: paired movement against the clean arm, per arm and step k.", header, rows)
    for caption, fig in figures(payload["rows"], summary):
        sec.figure(caption, fig)
    return sec


def demo_sections(
    out_dir: Path,
    *,
    data_root: Path | None,
    seed: int,
    progress: Callable[[int, int, str], None] | None = None,
) -> list[Any]:
    """Demo size: 2 retail tasks (compact policy; arms clean, failed and the two falsified
    ones; k = 0..1) with the embedded model, or the shipped mini domain when no tau2 data
    is present; writes ``out_dir/faults.json``. About 200 s of one core."""
    has_retail = data_root is not None and (data_root / "tau2" / "domains" / "retail").is_dir()
    config = FaultsConfig(
        arms=("clean", "failed", "falsified_status", "falsified_payment"),
        tasks=2,
        k_max=1,
        policy="compact" if has_retail else "full",
        seed=seed,
    )
    from toolaudit.report import write_results

    # Working files (rows.jsonl, resumable) in a subfolder; the results file beside the rest.
    payload = run_faults(
        Path(out_dir) / "faults_run", config=config, data_root=data_root, progress=progress
    )
    write_results(Path(out_dir) / "faults.json", payload)
    return [report_section(payload)]

"""faults audit: inject one bad tool return and read the model's log-probabilities.

Replays a task's reference actions against the retail database (or reads recorded
trajectories through ``toolaudit.traces``), replaces the return at the injection site
with each arm's payload, and reads S0 / S1 / G and the next-action distribution at the
site and the calls after it (seed: fault-readings-logprob).
"""

from __future__ import annotations

from toolaudit.faults._contract import FAULTS_AUDIT, FaultsAuditConfig, FaultsResult
from toolaudit.faults._intent import StatusStatement, contradiction, stated_status
from toolaudit.faults._mini import mini_domain
from toolaudit.faults._replay import (
    ARMS,
    NoSite,
    Site,
    Trajectory,
    first_call_site,
    make_arms,
    replay,
)
from toolaudit.faults._report import report_section
from toolaudit.faults._retail import WRITE_TOOLS, RetailEnvironment
from toolaudit.faults._run import FaultsConfig, analyze, run_faults
from toolaudit.faults._schemas import TOOL_SCHEMAS
from toolaudit.faults._summary import summarize, table_rows
from toolaudit.faults._tasks import (
    DROPOUT_REASONS,
    Candidate,
    domain_census,
    dropout_counts,
    episode_census,
)

__all__ = [
    "FAULTS_AUDIT",
    "ARMS",
    "DROPOUT_REASONS",
    "TOOL_SCHEMAS",
    "WRITE_TOOLS",
    "Candidate",
    "FaultsAuditConfig",
    "FaultsConfig",
    "FaultsResult",
    "NoSite",
    "RetailEnvironment",
    "Site",
    "StatusStatement",
    "Trajectory",
    "analyze",
    "contradiction",
    "domain_census",
    "dropout_counts",
    "episode_census",
    "first_call_site",
    "make_arms",
    "mini_domain",
    "replay",
    "report_section",
    "run_faults",
    "stated_status",
    "summarize",
    "table_rows",
]

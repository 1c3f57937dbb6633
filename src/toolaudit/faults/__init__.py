"""faults audit: inject one bad tool return and read the model's log-probabilities.

Replays a task's reference actions against the retail database (or reads recorded
trajectories through ``toolaudit.traces``), replaces the return at the injection site
with each arm's payload, and reads S0 / S1 / G and the next-action distribution at the
site and the calls after it (seed: fault-readings-logprob).
"""

from __future__ import annotations

from toolaudit.faults._contract import FAULTS_AUDIT, FaultsAuditConfig, FaultsResult
from toolaudit.faults._mini import mini_domain
from toolaudit.faults._replay import (
    ARMS,
    Site,
    Trajectory,
    first_call_site,
    replay,
)
from toolaudit.faults._report import report_section
from toolaudit.faults._run import (
    FaultsConfig,
    analyze,
)
from toolaudit.faults._schemas import TOOL_SCHEMAS
from toolaudit.faults._summary import summarize
from toolaudit.faults._tasks import (
    Candidate,
    domain_census,
)

__all__ = [
    "FAULTS_AUDIT",
    "ARMS",
    "TOOL_SCHEMAS",
    "Candidate",
    "FaultsAuditConfig",
    "FaultsConfig",
    "FaultsResult",
    "Site",
    "Trajectory",
    "analyze",
    "domain_census",
    "first_call_site",
    "mini_domain",
    "replay",
    "report_section",
    "summarize",
]

"""The audit contract and the one registry of audits.

Every audit is an object with a frozen config dataclass, ``run(config, ...)`` returning a
versioned pydantic result (``schema_version``, ``meta`` with seed, versions, config and
fallbacks) and ``sections(result)`` for the report; see ``docs/architecture.md``.
"""

from toolaudit.audits._contract import (
    Audit,
    AuditResult,
    HasHeadline,
    ProgressFn,
    ResultRecord,
    audit_headline,
    audit_sections,
    meta_from_payload,
    results_path,
)
from toolaudit.audits._demo_budget import relaxed_settings
from toolaudit.audits._io import (
    dump_result,
    load_result,
    result_meta,
    write_result,
)
from toolaudit.audits._registry import (
    AUDITS,
    Registration,
    audit_commands,
    load_audit,
)
from toolaudit.audits._run import load_results, run_audit
from toolaudit.report import Fallback, Finding, ResultMeta

__all__ = [
    "AUDITS",
    "Audit",
    "AuditResult",
    "HasHeadline",
    "Fallback",
    "Finding",
    "ProgressFn",
    "Registration",
    "ResultRecord",
    "ResultMeta",
    "audit_commands",
    "audit_headline",
    "audit_sections",
    "dump_result",
    "load_audit",
    "load_result",
    "load_results",
    "meta_from_payload",
    "relaxed_settings",
    "result_meta",
    "results_path",
    "run_audit",
    "write_result",
]

"""The one registry of audits: name -> ``"module:attribute"``, imported lazily.

Adding an audit is one package that exposes an :class:`~toolaudit.audits.Audit` object
and one line here. ``toolaudit demo`` and the report run the audits in this order.
"""

from __future__ import annotations

import importlib
from typing import Any

from toolaudit.audits._contract import Audit
from toolaudit.errors import ConfigError

# Registry name -> public "module:attribute" of the audit object, in report order.
AUDITS: dict[str, str] = {
    "traces": "toolaudit.traces:TRACES_AUDIT",
    "datasets": "toolaudit.datasets:DATASETS_AUDIT",
    "leakage": "toolaudit.leakage:LEAKAGE_AUDIT",
    "redaction": "toolaudit.redaction:REDACTION_AUDIT",
    "probe": "toolaudit.probes:PROBE_AUDIT",
    "probe_compare": "toolaudit.probes:PROBE_COMPARE_AUDIT",
    "faults": "toolaudit.faults:FAULTS_AUDIT",
}


def audit_names() -> list[str]:
    """The registered audit names, in report order."""
    return list(AUDITS)


def load_audit(name: str) -> Audit[Any, Any]:
    """The audit object registered as ``name`` (its package is imported now).

    >>> load_audit("datasets").result_model.results_file
    'datasets.json'
    """
    try:
        target = AUDITS[name]
    except KeyError:
        raise ConfigError.invalid("audit", list(AUDITS), name) from None
    module_name, _, attr = target.partition(":")
    audit = getattr(importlib.import_module(module_name), attr)
    if not isinstance(audit, Audit):
        raise TypeError(f"{target} does not implement the Audit protocol")
    return audit

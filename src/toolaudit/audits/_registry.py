"""The one registry of audits: name -> :class:`Registration` (where the audit object is,
and the CLI subcommand that runs it), imported lazily.

Adding an audit is one package that exposes an :class:`~toolaudit.audits.Audit` object
and one line here. ``toolaudit demo`` and the report run the audits in this order, and
``toolaudit``'s subcommands are built from it (see :func:`audit_commands`).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any

from toolaudit.audits._contract import Audit
from toolaudit.errors import ConfigError


@dataclass(frozen=True, slots=True)
class Registration:
    """One line of the registry.

    Attributes:
        target: the public ``"module:attribute"`` of the audit object.
        command: the ``toolaudit`` subcommand that runs the audit, with options of its
            own: the CLI builds it with ``register(subparsers)`` of its module of the same
            name (``redact`` -> ``toolaudit.cli._redact``). Audits may share one
            (``probe`` runs both probe audits). ``None``: the audit gets the generic
            subcommand ``toolaudit NAME --out DIR [--seed N] [--data-root DIR] [--json]``,
            which runs its demo configuration; an audit needs no CLI code of its own.
    """

    target: str
    command: str | None = None


# Registry name -> where the audit object is and its subcommand, in report order.
AUDITS: dict[str, Registration] = {
    "traces": Registration("toolaudit.traces:TRACES_AUDIT", command="traces"),
    "datasets": Registration("toolaudit.datasets:DATASETS_AUDIT", command="datasets"),
    "leakage": Registration("toolaudit.leakage:LEAKAGE_AUDIT", command="leakage"),
    "leakage_tau2": Registration("toolaudit.leakage:LEAKAGE_REAL_AUDIT", command="leakage"),
    "redaction": Registration("toolaudit.redaction:REDACTION_AUDIT", command="redact"),
    "probe": Registration("toolaudit.probes:PROBE_AUDIT", command="probe"),
    "probe_compare": Registration("toolaudit.probes:PROBE_COMPARE_AUDIT", command="probe"),
    "probe_tau2": Registration("toolaudit.probes:PROBE_TAU2_AUDIT", command="probe"),
    "probe_llm": Registration("toolaudit.probes:PROBE_LLM_AUDIT", command="probe"),
    "faults": Registration("toolaudit.faults:FAULTS_AUDIT", command="faults"),
}


def audit_names() -> list[str]:
    """The registered audit names, in report order."""
    return list(AUDITS)


def audit_commands() -> dict[str, str | None]:
    """The ``toolaudit`` subcommand of every registered audit, in registry order, each
    once: subcommand -> the registry name of the audit that gets the generic subcommand,
    or ``None`` for a subcommand with its own CLI module (``Registration.command``).

    >>> list(audit_commands())
    ['traces', 'datasets', 'leakage', 'redact', 'probe', 'faults']
    >>> audit_commands()["redact"] is None  # the redact subcommand has a module of its own
    True
    """
    out: dict[str, str | None] = {}
    for name, line in AUDITS.items():
        out.setdefault(line.command or name, None if line.command else name)
    return out


def load_audit(name: str) -> Audit[Any, Any]:
    """The audit object registered as ``name`` (its package is imported now).

    >>> load_audit("datasets").result_model.results_file
    'datasets.json'
    """
    try:
        target = AUDITS[name].target
    except KeyError:
        raise ConfigError.invalid("audit", list(AUDITS), name) from None
    module_name, _, attr = target.partition(":")
    audit = getattr(importlib.import_module(module_name), attr)
    if not isinstance(audit, Audit):
        raise TypeError(f"{target} does not implement the Audit protocol")
    return audit

"""``toolaudit probe``: paired mutations, rescoring, paired comparisons, judge audits.

One module per subcommand: ``_probe_run`` (run), ``_probe_analyze`` (analyze, and the
analysis and judge options run and analyze share), ``_probe_compare`` (compare, reruns),
``_probe_parity`` (parity), ``_probe_judge`` (judge) and ``_judge_audit`` (judge-audit).
"""

from __future__ import annotations

import argparse

from toolaudit.cli._judge_audit import add_judge_audit
from toolaudit.cli._probe_analyze import add_analyze
from toolaudit.cli._probe_compare import add_compare, add_reruns
from toolaudit.cli._probe_judge import add_judge
from toolaudit.cli._probe_parity import add_parity
from toolaudit.cli._probe_run import add_run


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``probe run|analyze|compare|parity|judge|judge-audit|reruns``."""
    probe = sub.add_parser(
        "probe",
        help="did a score change come from the agent, the environment or the verifier?",
        description="Paired evaluation mutations with trajectory comparison and "
        "counterfactual rescoring (TRACE), paired comparisons of result files, judge audits.",
    )
    psub = probe.add_subparsers(dest="probe_command", metavar="ACTION")
    probe.set_defaults(func=lambda args: (probe.print_help(), 2)[1])

    add_run(psub)
    add_analyze(psub)
    add_compare(psub)
    add_parity(psub)
    add_reruns(psub)
    add_judge(psub)
    add_judge_audit(psub)

"""probe audit: paired mutations, counterfactual rescoring, controls and a judge audit.

Entry points: :func:`run_probe_study` / :func:`analyze_study` (the controlled ResearchOps
suite), :class:`HarnessStudyConfig` / :func:`run_harness_records` (a real Inspect AI task,
tau2-bench through inspect_evals, under the same mutations), :class:`Tau2StudyConfig` /
:func:`run_tau2_records` (tau2-bench itself), :func:`parity` (one benchmark on two
harnesses), :func:`compare_files` (two imported result files as a paired comparison),
:func:`judge_records` (a real judge through ``toolaudit.models``) and :func:`judge_audit`
(verdict records), :func:`judge_audit_traces` (the seed's judge audit on any trace
file), and the mutations in ``CONDITIONS``.

The package is a one-way house of rooms: ``_seam`` (the harness protocols) and
``_mutations`` (the conditions every harness shares) at the bottom; ``agents/`` and
``harnesses/`` (``researchops``, ``inspect``, ``tau2``) beside ``judges/`` and
``analysis/``, which never import a harness; ``reports/`` above the analysis; ``study/``
and ``contracts/`` on top (``tests/probes/test_layout.py`` keeps the directions).
"""

from toolaudit.probes._seam import REAL_HARNESSES
from toolaudit.probes.agents._llm import DEFAULT_MODEL, llm_factory
from toolaudit.probes.agents._researchops import Agent
from toolaudit.probes.analysis._compare import (
    compare_files,
    read_side,
    rerun_flips,
)
from toolaudit.probes.analysis._procedure_reasons import classify_reason
from toolaudit.probes.analysis._runs import Run
from toolaudit.probes.analysis._sentences import sentence
from toolaudit.probes.analysis._stats import (
    Replicates,
    cluster_mean_replicates,
    pass_hat_k,
)
from toolaudit.probes.analysis._summaries import findings
from toolaudit.probes.contracts._llm import PROBE_LLM_AUDIT
from toolaudit.probes.contracts._probe import (
    PROBE_AUDIT,
    PROBE_COMPARE_AUDIT,
    ProbeCompareConfig,
    ProbeCompareResult,
    ProbeResult,
)
from toolaudit.probes.contracts._tau2 import PROBE_TAU2_AUDIT
from toolaudit.probes.harnesses.researchops._harness import Environment, RunSpec, run_one
from toolaudit.probes.harnesses.researchops._mutations import (
    Compose,
    EvalConfig,
    Identity,
    IncentiveChange,
    MisleadingNames,
    Mutation,
    Reformat,
    RubricChange,
    ToolRename,
    invert_episode,
)
from toolaudit.probes.harnesses.researchops._verifier import (
    Score,
    Verifier,
)
from toolaudit.probes.judges._records import VerdictRecord, judge_audit, read_verdicts
from toolaudit.probes.judges._run import JudgeAuditConfig, select_records
from toolaudit.probes.judges._seed import seed_judge_audit
from toolaudit.probes.judges._study import JudgeConfig, judge_records
from toolaudit.probes.judges._traces import judge_audit_traces
from toolaudit.probes.judges._views import AUDIT_VIEWS, PRESENTATION_VIEWS
from toolaudit.probes.reports._harness import harness_section
from toolaudit.probes.reports._parity import parity_section
from toolaudit.probes.reports._study import compare_section, study_section
from toolaudit.probes.study._config import ProbeStudyConfig, run_records
from toolaudit.probes.study._inspect import (
    HarnessStudyConfig,
    run_harness_records,
)
from toolaudit.probes.study._parity import parity
from toolaudit.probes.study._probe import analyze_study, check_analysis, run_probe_study
from toolaudit.probes.study._records import reduce_records
from toolaudit.probes.study._run import run_study
from toolaudit.probes.study._runconfig import check_run_config, read_run_config
from toolaudit.probes.study._tau2 import Tau2StudyConfig, run_tau2_records

__all__ = [
    "harness_section",
    "parity",
    "parity_section",
    "REAL_HARNESSES",
    "HarnessStudyConfig",
    "Tau2StudyConfig",
    "run_tau2_records",
    "run_harness_records",
    "ProbeCompareConfig",
    "ProbeCompareResult",
    "ProbeResult",
    "ProbeStudyConfig",
    "run_records",
    "DEFAULT_MODEL",
    "llm_factory",
    "PROBE_AUDIT",
    "PROBE_COMPARE_AUDIT",
    "PROBE_LLM_AUDIT",
    "PROBE_TAU2_AUDIT",
    "JudgeConfig",
    "JudgeAuditConfig",
    "AUDIT_VIEWS",
    "PRESENTATION_VIEWS",
    "classify_reason",
    "judge_audit_traces",
    "seed_judge_audit",
    "select_records",
    "Replicates",
    "check_run_config",
    "cluster_mean_replicates",
    "judge_records",
    "pass_hat_k",
    "read_run_config",
    "sentence",
    "Agent",
    "Compose",
    "Environment",
    "EvalConfig",
    "Identity",
    "IncentiveChange",
    "MisleadingNames",
    "Mutation",
    "Reformat",
    "RubricChange",
    "Run",
    "RunSpec",
    "Score",
    "ToolRename",
    "Verifier",
    "VerdictRecord",
    "analyze_study",
    "check_analysis",
    "compare_files",
    "compare_section",
    "findings",
    "invert_episode",
    "judge_audit",
    "read_side",
    "read_verdicts",
    "reduce_records",
    "rerun_flips",
    "run_one",
    "run_probe_study",
    "run_study",
    "study_section",
]

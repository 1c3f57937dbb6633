"""probe audit: paired mutations, counterfactual rescoring, controls and a judge audit.

Entry points: :func:`run_probe_study` / :func:`analyze_study` (the controlled ResearchOps
suite), :class:`HarnessStudyConfig` / :func:`run_harness_records` (a real Inspect AI task,
tau2-bench through inspect_evals, under the same mutations), :func:`compare_files` (two imported result files as a paired comparison),
:func:`judge_records` (a real judge through ``toolaudit.models``) and :func:`judge_audit`
(verdict records), :func:`judge_audit_traces` (the seed's judge audit on any trace
file), and the mutations in ``CONDITIONS``.
"""

from toolaudit.probes._analysis import (
    Run,
    reduce_records,
)
from toolaudit.probes._compare import (
    compare_files,
    read_side,
    rerun_flips,
)
from toolaudit.probes._contract import (
    PROBE_AUDIT,
    PROBE_COMPARE_AUDIT,
    ProbeCompareConfig,
    ProbeCompareResult,
    ProbeResult,
)
from toolaudit.probes._findings import sentence
from toolaudit.probes._harness import (
    Environment,
    RunSpec,
    run_one,
    run_study,
)
from toolaudit.probes._harness_report import harness_section
from toolaudit.probes._inspect_study import (
    HarnessStudyConfig,
    run_harness_records,
)
from toolaudit.probes._judge_audit import VerdictRecord, judge_audit, read_verdicts
from toolaudit.probes._judge_protocol import (
    JudgeConfig,
    judge_records,
)
from toolaudit.probes._judge_run import JudgeAuditConfig, select_records
from toolaudit.probes._judge_seed import seed_judge_audit
from toolaudit.probes._judge_traces import judge_audit_traces
from toolaudit.probes._judge_views import AUDIT_VIEWS, PRESENTATION_VIEWS
from toolaudit.probes._llm_agent import DEFAULT_MODEL, llm_factory
from toolaudit.probes._llm_contract import PROBE_LLM_AUDIT
from toolaudit.probes._mutations import (
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
from toolaudit.probes._parity import parity
from toolaudit.probes._parity_report import parity_section
from toolaudit.probes._policies import Agent
from toolaudit.probes._procedure_reasons import classify_reason
from toolaudit.probes._report import compare_section, study_section
from toolaudit.probes._runconfig import check_run_config, read_run_config
from toolaudit.probes._seam import REAL_HARNESSES
from toolaudit.probes._stats import (
    Replicates,
    cluster_mean_replicates,
    pass_hat_k,
)
from toolaudit.probes._study import (
    analyze_study,
    check_analysis,
    findings,
    run_probe_study,
)
from toolaudit.probes._study_config import ProbeStudyConfig, run_records
from toolaudit.probes._tau2_contract import PROBE_TAU2_AUDIT
from toolaudit.probes._verifier import (
    Score,
    Verifier,
)

__all__ = [
    "harness_section",
    "parity",
    "parity_section",
    "REAL_HARNESSES",
    "HarnessStudyConfig",
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

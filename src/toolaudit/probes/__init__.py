"""probe audit: paired mutations, counterfactual rescoring, controls and a judge audit.

Entry points: :func:`run_probe_study` / :func:`analyze_study` (the controlled ResearchOps
suite), :func:`compare_files` (two imported result files as a paired comparison),
:func:`judge_records` (a real judge through ``toolaudit.models``) and :func:`judge_audit`
(verdict records), and the mutations in ``CONDITIONS``.
"""

from toolaudit.probes._analysis import Run, analyze_runs, reduce_records
from toolaudit.probes._compare import compare_files, compare_sides, read_side, rerun_flips
from toolaudit.probes._contract import (
    PROBE_AUDIT,
    PROBE_COMPARE_AUDIT,
    ProbeCompareConfig,
    ProbeCompareResult,
    ProbeResult,
)
from toolaudit.probes._findings import sentence, study_findings
from toolaudit.probes._harness import Environment, RunSpec, run_one, run_study, study_specs
from toolaudit.probes._judge_audit import VerdictRecord, judge_audit, read_verdicts
from toolaudit.probes._judge_protocol import (
    JudgeConfig,
    judge_messages,
    judge_records,
    parse_verdict,
    render_record,
)
from toolaudit.probes._llm_agent import DEFAULT_MODEL, llm_factory
from toolaudit.probes._llm_contract import PROBE_LLM_AUDIT
from toolaudit.probes._mutations import (
    CONDITIONS,
    Compose,
    EvalConfig,
    Identity,
    IncentiveChange,
    MisleadingNames,
    Mutation,
    Reformat,
    RubricChange,
    ToolRename,
    action_sequence,
    condition_config,
    invert_episode,
)
from toolaudit.probes._policies import Agent
from toolaudit.probes._report import compare_section, study_section
from toolaudit.probes._runconfig import check_run_config, read_run_config
from toolaudit.probes._selection import selection_experiment
from toolaudit.probes._stats import (
    Replicates,
    cluster_mean_replicates,
    corrected_equivalence,
    pass_hat_k,
)
from toolaudit.probes._study import (
    analyze_study,
    check_analysis,
    findings,
    load_records,
    run_probe_study,
)
from toolaudit.probes._study_config import ProbeStudyConfig, run_records
from toolaudit.probes._suite import N_TASKS
from toolaudit.probes._verifier import CompositeVerifier, Score, Verifier

__all__ = [
    "ProbeCompareConfig",
    "ProbeCompareResult",
    "ProbeResult",
    "ProbeStudyConfig",
    "run_records",
    "N_TASKS",
    "DEFAULT_MODEL",
    "llm_factory",
    "PROBE_AUDIT",
    "PROBE_COMPARE_AUDIT",
    "PROBE_LLM_AUDIT",
    "CONDITIONS",
    "JudgeConfig",
    "Replicates",
    "check_run_config",
    "cluster_mean_replicates",
    "corrected_equivalence",
    "judge_messages",
    "judge_records",
    "parse_verdict",
    "pass_hat_k",
    "read_run_config",
    "render_record",
    "sentence",
    "Agent",
    "Compose",
    "CompositeVerifier",
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
    "action_sequence",
    "analyze_runs",
    "analyze_study",
    "check_analysis",
    "compare_files",
    "compare_section",
    "compare_sides",
    "condition_config",
    "findings",
    "invert_episode",
    "judge_audit",
    "load_records",
    "read_side",
    "read_verdicts",
    "reduce_records",
    "rerun_flips",
    "run_one",
    "run_probe_study",
    "run_study",
    "selection_experiment",
    "study_findings",
    "study_section",
    "study_specs",
]

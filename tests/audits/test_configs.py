"""Each audit's config checks its values on construction: a library, registry or demo
caller gets the same one-line ConfigError the CLI prints, without the CLI."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from toolaudit.datasets._contract import DatasetsConfig
from toolaudit.errors import ConfigError
from toolaudit.faults import FaultsConfig
from toolaudit.leakage import DilutionConfig, LeakageConfig
from toolaudit.leakage._contract import LeakageAuditConfig
from toolaudit.probes import ProbeStudyConfig, analyze_study
from toolaudit.probes.contracts._llm import ProbeLLMConfig
from toolaudit.probes.contracts._probe import ProbeCompareConfig, ProbeConfig
from toolaudit.probes.judges._study import JudgeConfig
from toolaudit.redaction import RedactionConfig, RedactionStudyConfig
from toolaudit.traces._contract import TracesConfig

BAD: list[tuple[str, Callable[[], Any], str]] = [
    ("leakage-n-boot", lambda: LeakageConfig(n_boot=0), "invalid n_boot=0"),
    ("leakage-cv-folds", lambda: LeakageConfig(cv_folds=1), "invalid cv_folds=1"),
    ("leakage-n-jobs", lambda: LeakageConfig(n_jobs=0), "invalid n_jobs=0"),
    ("leakage-threads", lambda: LeakageConfig(threads=-1), "invalid threads=-1"),
    ("leakage-seed", lambda: LeakageConfig(seed=-1), "invalid seed=-1"),
    ("leakage-features", lambda: LeakageConfig(features=()), "invalid features="),
    ("leakage-backend", lambda: LeakageConfig(backend="dask"), "invalid backend="),
    ("dilution-seeds", lambda: DilutionConfig(n_seeds=0), "invalid dilution_seeds=0"),
    ("dilution-k", lambda: DilutionConfig(k_values=(0, -2)), "invalid dilution_k=-2"),
    ("leakage-audit-scale", lambda: LeakageAuditConfig(scale=0.0), "invalid scale=0.0"),
    ("faults-k-max", lambda: FaultsConfig(k_max=11), "invalid k_max=11"),
    ("faults-arms", lambda: FaultsConfig(arms=("failed",)), "invalid arms="),
    ("faults-model", lambda: FaultsConfig(model="nosuch:x"), "nosuch"),
    ("probe-margin", lambda: ProbeConfig(margin=float("nan")), "invalid margin=nan"),
    ("probe-seeds", lambda: ProbeConfig(n_seeds=0), "invalid n_seeds=0"),
    ("probe-compare-seed", lambda: ProbeCompareConfig(seed=-3), "invalid seed=-3"),
    ("probe-llm-steps", lambda: ProbeLLMConfig(max_steps=0), "invalid max_steps=0"),
    ("probe-llm-margin", lambda: ProbeLLMConfig(margin=1.5), "invalid margin=1.5"),
    ("probe-llm-temperature", lambda: ProbeLLMConfig(temperature=2.5), "invalid temperature=2.5"),
    ("judge-temperature", lambda: JudgeConfig("m", temperature=3.0), "invalid judge_temperature=3.0"),
    ("judge-views", lambda: JudgeConfig("m", views=("sideways",)), "invalid judge_views='sideways'"),
    ("redaction-scoring", lambda: RedactionConfig(scoring="vibes"), "invalid scoring='vibes'"),
    ("redaction-scale", lambda: RedactionConfig(scale=-1.0), "invalid scale=-1.0"),
    ("datasets-dataset", lambda: DatasetsConfig(dataset="nosuch"), "invalid dataset='nosuch'"),
    ("datasets-strength", lambda: DatasetsConfig(strength=9.0), "invalid strength=9.0"),
    ("traces-seed", lambda: TracesConfig(seed=-1), "invalid seed=-1"),
    ("probe-study-seeds", lambda: ProbeStudyConfig(n_seeds=0), "invalid n_seeds=0"),
    ("probe-study-suite", lambda: ProbeStudyConfig(suite="webshop"), "invalid suite='webshop'"),
    ("probe-study-tasks", lambda: ProbeStudyConfig(tasks=26), "invalid tasks=26"),
    ("probe-study-policy", lambda: ProbeStudyConfig(policies=("nosuch",)), "invalid policies='nosuch'"),
    ("probe-study-no-policy", lambda: ProbeStudyConfig(policies=()), "invalid policies=''"),
    ("probe-study-condition", lambda: ProbeStudyConfig(conditions=("nosuch",)), "invalid conditions='nosuch'"),
    ("probe-study-temperature", lambda: ProbeStudyConfig(temperature=float("inf")), "invalid temperature=inf"),
    ("probe-study-model", lambda: ProbeStudyConfig(model="embedded:qwen"), "drives the 'llm' policy"),
    ("probe-compare-threshold", lambda: ProbeCompareConfig(threshold=0.0), "invalid threshold=0.0"),
    ("probe-compare-margin", lambda: ProbeCompareConfig(margin=0.0), "invalid margin=0.0"),
    ("redaction-study-limit", lambda: RedactionStudyConfig(Path("x"), "m", limit=1), "invalid limit=1"),
    ("redaction-study-scoring", lambda: RedactionStudyConfig(Path("x"), "m", scoring="vibes"), "invalid scoring='vibes'"),
    ("redaction-study-eval", lambda: RedactionStudyConfig(Path("x"), "m", eval={"split": []}), "invalid eval="),
    ("probe-analysis-margin", lambda: analyze_study("/nonexistent", margin=float("nan")), "invalid margin=nan"),
    ("probe-analysis-n-boot", lambda: analyze_study("/nonexistent", n_boot=0), "invalid n_boot=0"),
]  # fmt: skip


@pytest.mark.parametrize(("build", "message"), [b[1:] for b in BAD], ids=[b[0] for b in BAD])
def test_a_config_refuses_a_bad_value_on_construction(
    build: Callable[[], Any], message: str
) -> None:
    with pytest.raises(ConfigError) as info:
        build()
    text = str(info.value)
    assert message in text and "\n" not in text


def test_every_default_config_constructs() -> None:
    for cls in (LeakageConfig, DilutionConfig, LeakageAuditConfig, FaultsConfig, ProbeConfig,
                ProbeCompareConfig, ProbeLLMConfig, RedactionConfig, DatasetsConfig,
                TracesConfig, ProbeStudyConfig):  # fmt: skip
        cls()
    RedactionStudyConfig(Path("examples.jsonl"), "embedded:qwen")
    JudgeConfig("embedded:qwen")

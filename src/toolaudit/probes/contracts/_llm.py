"""An LLM agent under the probe's repeat control, as a registered audit (``probe_llm``):
the embedded instruct model drives the ResearchOps tasks under the original and the
repeat conditions, and the repeat control says how often identical reruns flip pass.

It is its own part so that ``toolaudit demo --only`` can leave every model-facing part
out (``faults`` and ``probe_llm``); the full study is ``toolaudit probe run --policies
llm`` (:data:`LLM_COMMAND`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, ClassVar

from toolaudit.audits import AuditResult, ProgressFn, relaxed_settings, result_meta
from toolaudit.errors import check_min
from toolaudit.models import check_temperature
from toolaudit.probes.analysis._sentences import sentence
from toolaudit.probes.contracts._probe import ProbeCell
from toolaudit.probes.reports._study import transcript_blocks
from toolaudit.probes.study._probe import analyze_study, check_analysis, run_probe_study
from toolaudit.report import Fallback, Finding, Section

LLM_COMMAND = "toolaudit probe run --policies llm --conditions original,repeat --out DIR"


@dataclass(frozen=True, slots=True)
class ProbeLLMConfig:
    """The agent (model, temperature, generations per run), how many tasks and seeds
    under the original and repeat conditions, and the analysis settings."""

    model: str = "embedded:qwen"
    tasks: int | None = None
    seeds: int = 3
    max_steps: int = 10
    temperature: float = 0.7
    margin: float = 0.10
    n_boot: int = 2000
    seed: int = 0
    relaxed: tuple[Fallback, ...] = ()

    def __post_init__(self) -> None:
        if self.tasks is not None:
            check_min("tasks", self.tasks, 1)
        check_min("seeds", self.seeds, 1)
        check_min("max_steps", self.max_steps, 1)
        check_temperature("temperature", self.temperature)
        check_analysis(margin=self.margin, seed=self.seed, n_boot=self.n_boot)


#: The settings the demo reduces (issue 16): one task, original and repeat, one seed,
#: two generations a run.
DEMO_SIZE = ("tasks", "seeds", "max_steps")


class ProbeLLMResult(AuditResult):
    """``probe/probe_llm.json``: the LLM agent's cells, its repeat control and findings."""

    results_file: ClassVar[str] = "probe/probe_llm.json"

    cells: list[ProbeCell]
    repeat_control: list[dict[str, Any]]
    conclusions: list[dict[str, Any]]
    agent: dict[str, Any]
    records: int
    transcripts: list[dict[str, Any]] = []


class ProbeLLMAudit:
    """The LLM agent's repeat control on the built-in ResearchOps suite."""

    name = "probe_llm"
    title = "Probe audit: an LLM agent and its repeat control"
    result_model = ProbeLLMResult

    def demo_config(self, *, seed: int, data_root: Path | None) -> ProbeLLMConfig:
        """:data:`DEMO_SIZE` on the embedded Qwen, each reduction a recorded
        ``relaxed_parameter``; ``data_root`` is unused."""
        default = ProbeLLMConfig()
        demo = replace(default, seed=seed, tasks=1, seeds=1, max_steps=2)
        sizes = {k: (getattr(demo, k), getattr(default, k)) for k in DEMO_SIZE}
        return replace(demo, relaxed=relaxed_settings(self.name, sizes))

    def run(
        self, config: ProbeLLMConfig, *, out_dir: Path, progress: ProgressFn | None = None
    ) -> ProbeLLMResult:
        """Run (or resume) the agent into ``out_dir/probe_llm`` and analyse it."""
        from toolaudit.probes import llm_factory

        study = Path(out_dir) / "probe_llm"
        agent = {
            "model": config.model,
            "temperature": config.temperature,
            "max_steps": config.max_steps,
        }
        factory = llm_factory(
            config.model, temperature=config.temperature, max_steps=config.max_steps
        )
        run_probe_study(
            study,
            n_seeds=config.seeds,
            seed=config.seed,
            n_jobs=1,
            tasks=list(range(config.tasks)) if config.tasks is not None else None,
            policies=["llm"],
            conditions=["original", "repeat"],
            progress=progress,
            agents={"llm": factory},
            agent_options={"llm": agent},
            options=agent,
        )
        doc = analyze_study(
            study, margin=config.margin, seed=config.seed, n_boot=config.n_boot, write=False
        )
        payload = {
            "cells": doc["cells"],
            "repeat_control": doc["repeat_control"],
            "conclusions": [
                c for c in doc.get("conclusions", []) if c["name"].startswith("probe.repeat")
            ],
            "agent": {**agent, "tasks": doc["tasks"], "seeds": config.seeds},
            "records": doc["records"],
            "transcripts": doc.get("transcripts", []),
        }
        settings = {**payload["agent"], "margin": config.margin, "n_boot": config.n_boot}
        meta = result_meta(command="probe run --policies llm", seed=config.seed,
                           config=settings, fallbacks=list(config.relaxed))  # fmt: skip
        return ProbeLLMResult.new(meta, **payload)

    def headline(self, result: ProbeLLMResult) -> Finding | None:
        """The repeat control of the LLM agent: pass flips between identical reruns."""
        found = next(
            (c for c in result.conclusions if c.get("name") == "probe.repeat_control.llm"), None
        )
        return Finding.model_validate(found) if found else None

    def sections(self, result: ProbeLLMResult) -> list[Section]:
        """The agent, its cells and the repeat control."""
        a = result.agent
        sec = Section(self.title).text(
            f"{a['model']} as the agent at temperature {a['temperature']}, at most "
            f"{a['max_steps']} generations a run: {a['tasks']} task(s) x original and "
            f"repeat x {a['seeds']} seed(s), {result.records} runs. The full study: "
            f"`{LLM_COMMAND}`."
        )
        # each pair's first run beside its rerun under the condition (for `original`,
        # the first run is the condition itself)
        sec.table(
            "The LLM agent's cells: each pair's first run and its run under the condition",
            [
                "condition",
                "pairs",
                "pass rate, first",
                "pass rate, this",
                "reward, first",
                "reward, this",
                "calls, this",
            ],  # fmt: skip
            [
                [
                    c.condition,
                    getattr(c, "n_pairs", None),
                    getattr(c, "pass_rate_original", None),
                    getattr(c, "pass_rate_mutated", getattr(c, "pass_rate_original", None)),
                    getattr(c, "reward_original", None),
                    getattr(c, "reward_mutated", getattr(c, "reward_original", None)),
                    getattr(c, "mean_calls_mutated", None),
                ]
                for c in result.cells
            ],
        )
        sec.table(
            "Repeat control: pass flips between identical reruns (95% interval)",
            ["policy", "pairs", "repeat flips", "repeat 95%"],
            [
                [
                    r["policy"],
                    r.get("n_pairs"),
                    r["repeat_flip_rate"],
                    r.get("repeat_flip_rate_ci95"),
                ]  # fmt: skip
                for r in result.repeat_control
            ],
        )
        for c in result.conclusions:
            sec.text(sentence(Finding.model_validate(c)))
        transcript_blocks(sec, result.transcripts)
        return [sec]


PROBE_LLM_AUDIT = ProbeLLMAudit()

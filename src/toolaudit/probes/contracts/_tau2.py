"""TRACE on a real benchmark as a registered audit (``probe_tau2``): the three scripted
reference agents on tau2-bench telecom through inspect_evals' Inspect-native tau2, under
every condition, each mutated run rescored by the task's own scorer.

It is the demo's known-answer test of the whole harness pipeline on real tasks (no
model: Inspect's ``mockllm`` plays the scripted agents and user): the careful agent
follows the reference actions by the tools' descriptions, the overfit agent calls the
canonical names it memorised, the inert agent never acts. The full study is
``toolaudit probe run --harness inspect`` (:data:`TAU2_COMMAND`), committed in
``results/probe-tau2-scripted``.
"""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from toolaudit.audits import ProgressFn, relaxed_settings, result_meta
from toolaudit.errors import MissingDependencyError
from toolaudit.probes.contracts._probe import ProbeAudit, ProbeResult, attribution_headline
from toolaudit.probes.study._inspect import HarnessStudyConfig
from toolaudit.report import Fallback, Finding, Section, record_fallback

TAU2_TASK = "inspect_evals/tau2_telecom"
TAU2_COMMAND = (
    f"toolaudit probe run --harness inspect --task {TAU2_TASK} --policies careful,overfit,inert "
    "--conditions original,tool_rename,reformat,misleading_names,repeat --out DIR"
)
#: The demo's size: the first 20 of telecom's 114 tasks (300 runs, about a minute).
DEMO_LIMIT = 20


class ProbeTau2Result(ProbeResult):
    """``probe/tau2_telecom.json``: the harness study's ``probe.json`` (empty, with a
    ``skipped_part`` fallback, when the ``[inspect]`` extra is not installed)."""

    results_file: ClassVar[str] = "probe/tau2_telecom.json"


class ProbeTau2Audit:
    """The scripted agents on tau2-bench telecom (Inspect AI), every condition."""

    name = "probe_tau2"
    title = "Probe audit: TRACE on tau2-bench telecom (Inspect AI, scripted agents)"
    result_model = ProbeTau2Result

    def demo_config(self, *, seed: int, data_root: Path | None) -> HarnessStudyConfig:
        """The first :data:`DEMO_LIMIT` telecom tasks, the three scripted agents, all
        five conditions (the limit is a recorded ``relaxed_parameter``). ``data_root``
        is unused: inspect_evals ships the tau2 data."""
        return HarnessStudyConfig(
            task=TAU2_TASK,
            policies=("careful", "overfit", "inert"),
            conditions=("original", "tool_rename", "reformat", "misleading_names", "repeat"),
            limit=DEMO_LIMIT,
            seed=seed,
        )

    def run(
        self, config: HarnessStudyConfig, *, out_dir: Path, progress: ProgressFn | None = None
    ) -> ProbeTau2Result:
        """Run (or resume) the study into ``out_dir/probe/tau2_<domain>`` and analyse it;
        without the ``[inspect]`` extra the part is a recorded ``skipped_part``."""
        from toolaudit.probes.harnesses.inspect._tasks import check_task, require_inspect

        chosen = {"limit": (config.limit, None), "task_ids": (config.task_ids, None)}
        relaxed = relaxed_settings(self.name, chosen)
        try:
            require_inspect()
        except MissingDependencyError as exc:
            fallbacks: list[Fallback] = []
            record_fallback(
                fallbacks,
                Fallback(kind="skipped_part", what="probe.tau2",
                         detail=f"{exc}; the study on real tau2 tasks was skipped"),
            )  # fmt: skip
            meta = result_meta(command="probe run --harness inspect", seed=config.seed,
                               config={"task": config.task}, fallbacks=fallbacks)  # fmt: skip
            return ProbeTau2Result.new(
                meta, cells=[], policies=[], repeat_control=[], findings={}, records=0,
                tasks=0, policies_run=[], conditions=[],
            )  # fmt: skip
        study = Path(out_dir) / "probe" / f"tau2_{check_task(config.task)}"
        base = ProbeAudit().run(config, out_dir=study, progress=progress)
        payload = base.model_dump(mode="python", exclude_unset=True)
        return ProbeTau2Result.from_payload(payload, relaxed)

    def headline(self, result: ProbeTau2Result) -> Finding | None:
        """Who caused the overfit agent's tool_rename gap (it calls the canonical names it
        memorised, so a real gap is expected, and rescoring must keep it)."""
        return attribution_headline(result, policy="overfit", condition="tool_rename")

    def sections(self, result: ProbeTau2Result) -> list[Section]:
        """The harness study's section, with the full study's command; nothing when the
        part was skipped."""
        if not result.records:
            return []
        sections = ProbeAudit().sections(result)
        sections[0].text(
            f"The demo runs the first {result.tasks} tasks; the full study on every task "
            f"of retail, airline and telecom is committed in results/probe-tau2-scripted "
            f"(`{TAU2_COMMAND}`)."
        )
        return sections


PROBE_TAU2_AUDIT = ProbeTau2Audit()

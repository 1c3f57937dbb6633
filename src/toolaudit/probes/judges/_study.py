"""The probe study's judge (``probe run|analyze --judge-model``): the records a study's
judge grades, and its settings, run through the one judge protocol
(:func:`~toolaudit.probes.judges._run.run_judges`: the same payloads, reply parsing, call
seeds and resumable ``verdicts.jsonl`` as ``probe judge-audit``).

A study's record carries its own task, so what the judge reads comes from the record
(:func:`~toolaudit.probes.judges._views.record_context`). By default the judge follows
the seed: the presentation views (``original``, ``repeat``, ``tool_rename``,
``reformat``) and the ``reason-first`` prompt; the content cuts (``full``,
``final_answer``, ``procedure``) and the ``study`` prompt are named views and a named
prompt of the same protocol (results/probe-llm was judged with them).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from toolaudit.errors import ConfigError, check_choice, check_min
from toolaudit.models import check_temperature
from toolaudit.probes.judges._prompts import MAX_TOKENS, PROMPTS
from toolaudit.probes.judges._records import VerdictRecord, record_id
from toolaudit.probes.judges._run import JudgeAuditConfig, run_judges
from toolaudit.probes.judges._views import AUDIT_VIEWS, PRESENTATION_VIEWS, record_context
from toolaudit.progress import Progress
from toolaudit.traces import Episode


@dataclass(frozen=True, slots=True)
class JudgeConfig:
    """How to run the study's judge: model spec, sampling, views, prompt, repeats, which
    records. ``max_tokens`` None: the prompt's own (128 for ``reason-first``)."""

    model: str
    temperature: float = 0.7
    n_repeats: int = 3
    views: tuple[str, ...] = PRESENTATION_VIEWS
    max_tokens: int | None = None
    seed: int = 0
    n_records: int = 20
    prompt: str = "reason-first"

    def __post_init__(self) -> None:
        check_temperature("judge_temperature", self.temperature)
        check_min("judge_repeats", self.n_repeats, 1)
        check_min("judge_records", self.n_records, 1)
        if self.max_tokens is not None:
            check_min("max_tokens", self.max_tokens, 1)
        check_min("seed", self.seed, 0)
        check_choice("judge_prompt", self.prompt, PROMPTS)
        if not self.views:
            raise ConfigError("--judge-views: give at least one view")
        for view in self.views:
            check_choice("judge_views", view, AUDIT_VIEWS)
        if self.prompt == "study" and set(self.views) - {"full", "final_answer", "procedure"}:
            raise ConfigError(
                "--judge-prompt study shows content cuts only: give --judge-views from "
                "full, final_answer, procedure"
            )

    @property
    def reply_tokens(self) -> int:
        """The most tokens a reply may take."""
        return self.max_tokens if self.max_tokens is not None else MAX_TOKENS[self.prompt]

    @property
    def reference_view(self) -> str:
        """The view the others are compared with (``original``, else the first)."""
        return "original" if "original" in self.views else self.views[0]


def judge_records(
    episodes: Sequence[Episode],
    config: JudgeConfig,
    *,
    out_path: str | Path | None = None,
    load: Callable[[str], Any] | None = None,
    progress: Progress | None = None,
) -> list[VerdictRecord]:
    """Ask a real judge for every (record, view, repeat) and return the verdict records,
    through the one judge protocol. ``load`` builds the model from its spec
    (``toolaudit.models.load_model`` by default). With ``out_path`` the verdicts are
    appended as they arrive and reused on a rerun."""
    audit = JudgeAuditConfig(
        judges=(config.model,),
        views=config.views,
        n_repeats=config.n_repeats,
        n_records=max(1, len(episodes)),
        seed=config.seed,
        temperature=config.temperature,
        max_tokens=config.reply_tokens,
        prompt=config.prompt,
    )
    contexts = {record_id(ep): record_context(ep) for ep in episodes}
    path = Path(out_path) if out_path is not None else None
    return run_judges(episodes, contexts, audit, out_path=path, load=load, progress=progress)


def select_for_judging(episodes: Sequence[Episode], n_records: int) -> list[Episode]:
    """The records a study's judge audit grades: original-condition runs of seed label 0,
    taken round-robin over policies in canonical order, at most ``n_records``."""
    pool = [e for e in episodes if e.condition == "original" and e.source.get("seed_label", 0) == 0]
    by_policy: dict[str, list[Episode]] = {}
    for e in pool:
        by_policy.setdefault(str(e.source.get("policy", "")), []).append(e)
    out: list[Episode] = []
    while len(out) < n_records and any(by_policy.values()):
        for lst in by_policy.values():
            if lst and len(out) < n_records:
                out.append(lst.pop(0))
    return out

"""Episode -> Example: one Example per agent run, so leakage runs on real trajectories.

Tool sections are the episode's tool results in order, each named after the tool whose
call it answers; ``label`` is ``reward >= threshold``; ``group`` is the task id.
Episodes without a reward are counted and skipped (a missing reward is never imputed).
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from toolaudit.traces._schema import Episode, Example, ToolSection

logger = logging.getLogger(__name__)

#: tau2-bench and tau-bench rewards are 0/1 (partial credit below 1 is a failure).
DEFAULT_THRESHOLD = 1.0


@dataclass(slots=True)
class ConversionCounts:
    """Running counts of a conversion; read them after the iterator is exhausted."""

    converted: int = 0
    skipped_no_reward: int = 0


def episode_id(episode: Episode) -> str:
    """A stable id for an episode: the loader's ``source.episode_id`` when present, else a
    hash of the episode's content (identical runs map to the same id)."""
    given = episode.source.get("episode_id")
    if given:
        return str(given)
    digest = hashlib.sha1(episode.model_dump_json().encode("utf-8")).hexdigest()[:16]
    return f"{episode.task_id}:{episode.trial}:{digest}"


def episode_to_example(episode: Episode, *, threshold: float = DEFAULT_THRESHOLD) -> Example:
    """Convert one rewarded episode; raises ValueError when it has no reward."""
    if episode.reward is None:
        raise ValueError(f"episode {episode_id(episode)} has no reward; it cannot be labelled")
    names: dict[str, str] = {c.id: c.name for c in episode.tool_calls()}
    sections: list[ToolSection] = []
    errors: list[bool] = []
    for msg in episode.tool_results():
        name = (msg.tool_call_id and names.get(msg.tool_call_id)) or msg.name or "unknown"
        sections.append(ToolSection(name=name, content=msg.content or ""))
        errors.append(msg.error)
    return Example(
        id=episode_id(episode),
        label=1 if episode.reward >= threshold else 0,
        group=episode.task_id,
        split="",
        tools=sections,
        meta={
            "reward": episode.reward,
            "reward_components": episode.reward_components,
            "threshold": threshold,
            "task_id": episode.task_id,
            "trial": episode.trial,
            "termination_reason": episode.termination_reason,
            "tool_errors": errors,
            "source": episode.source,
        },
    )


def episodes_to_examples(
    episodes: Iterable[Episode],
    *,
    threshold: float = DEFAULT_THRESHOLD,
    counts: ConversionCounts | None = None,
) -> Iterator[Example]:
    """Stream Examples from episodes; unrewarded episodes are skipped with one warning.

    Example:
        >>> counts = ConversionCounts()
        >>> examples = list(episodes_to_examples(eps, counts=counts))  # doctest: +SKIP
        >>> counts.skipped_no_reward  # doctest: +SKIP
        0
    """
    counts = counts if counts is not None else ConversionCounts()
    for ep in episodes:
        if ep.reward is None:
            counts.skipped_no_reward += 1
            continue
        counts.converted += 1
        yield episode_to_example(ep, threshold=threshold)
    if counts.skipped_no_reward:
        logger.warning(
            "skipped %d episode(s) without a reward (labels are never imputed); converted %d",
            counts.skipped_no_reward,
            counts.converted,
        )

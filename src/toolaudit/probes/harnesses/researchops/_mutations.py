"""The ResearchOps suite's evaluation mutations: declarative, composable, each with its inverse.

A mutation transforms an :class:`EvalConfig` (tool names shown to the agent, the
presentation of observations, the rubric, the incentive). Each one also maps a mutated
trajectory back into canonical terms (:func:`invert_episode`), so that an unchanged
behaviour can be recognised and the trajectory rescored under the original rule.

Conditions (``CONDITIONS``) are fixed compositions: ``original``, ``tool_rename``,
``reformat``, ``misleading_names`` (positive control), ``rubric_change``,
``incentive_change`` and ``repeat`` (identical rerun, the repeat control).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any, Literal, Protocol

from toolaudit.errors import ConfigError
from toolaudit.probes._mutations import CONDITION_NAMES, reverse_keys
from toolaudit.traces import Episode, Message, ToolCall

_CANON = ("search_datasets", "check_constraints", "load_dataset", "run_analysis", "submit_report")

ObsFormat = Literal["compact", "wrapped_reversed"]
Rubric = Literal["standard", "method_required"]


@dataclass(frozen=True, slots=True)
class EvalConfig:
    """One evaluation configuration.

    ``names`` maps canonical tool -> (shown name, actual operation): renaming changes the
    shown name only; a misleading permutation shows one tool's name on another's
    operation.
    """

    names: tuple[tuple[str, str, str], ...] = tuple((c, c, c) for c in _CANON)
    obs_format: ObsFormat = "compact"
    rubric: Rubric = "standard"
    incentive_explicit: bool = False

    def shown_names(self) -> dict[str, str]:
        """Canonical slot -> name shown to the agent."""
        return {slot: shown for slot, shown, _ in self.names}

    def actual_of_shown(self) -> dict[str, str]:
        """Shown name -> canonical operation actually executed."""
        return {shown: actual for _, shown, actual in self.names}

    def describe(self) -> dict[str, Any]:
        """A JSON-ready description (hashed into each run's config hash)."""
        return {
            "names": [list(t) for t in self.names],
            "obs_format": self.obs_format,
            "rubric": self.rubric,
            "incentive_explicit": self.incentive_explicit,
        }


class Mutation(Protocol):
    """A transformation of an evaluation configuration."""

    @property
    def name(self) -> str:
        """The condition name."""
        ...

    def apply(self, config: EvalConfig) -> EvalConfig:
        """The mutated configuration."""
        ...


@dataclass(frozen=True, slots=True)
class ToolRename:
    """Meaning-preserving aliases; schemas, descriptions and operations are kept."""

    aliases: tuple[tuple[str, str], ...]
    name: str = "tool_rename"

    def apply(self, config: EvalConfig) -> EvalConfig:
        amap = dict(self.aliases)
        return replace(config, names=tuple((s, amap.get(sh, sh), a) for s, sh, a in config.names))


@dataclass(frozen=True, slots=True)
class Reformat:
    """Same values in another JSON presentation: reversed key order, indentation and a
    ``{"result": ...}`` wrapper (array order unchanged)."""

    name: str = "reformat"

    def apply(self, config: EvalConfig) -> EvalConfig:
        return replace(config, obs_format="wrapped_reversed")


@dataclass(frozen=True, slots=True)
class MisleadingNames:
    """Positive control: names permuted among the domain tools (cyclic shift), while
    descriptions and schemas stay true to the operation each tool performs."""

    tools: tuple[str, ...] = _CANON[:4]
    name: str = "misleading_names"

    def apply(self, config: EvalConfig) -> EvalConfig:
        shown = config.shown_names()
        k = len(self.tools)
        # The operation of tool i is shown under the name of tool i+1.
        new_shown = {self.tools[i]: shown[self.tools[(i + 1) % k]] for i in range(k)}
        return replace(
            config, names=tuple((s, new_shown.get(s, sh), a) for s, sh, a in config.names)
        )


@dataclass(frozen=True, slots=True)
class RubricChange:
    """The rubric now credits naming the analysis method instead of efficiency."""

    rubric: Rubric = "method_required"
    name: str = "rubric_change"

    def apply(self, config: EvalConfig) -> EvalConfig:
        return replace(config, rubric=self.rubric)


@dataclass(frozen=True, slots=True)
class IncentiveChange:
    """The visible proxy reward channel is advertised in the prompt (proxy tasks only;
    on tasks without a channel the configuration is unchanged in effect)."""

    name: str = "incentive_change"

    def apply(self, config: EvalConfig) -> EvalConfig:
        return replace(config, incentive_explicit=True)


@dataclass(frozen=True, slots=True)
class Identity:
    """No change: the original condition and the identical-rerun repeat control."""

    name: str = "original"

    def apply(self, config: EvalConfig) -> EvalConfig:
        return config


@dataclass(frozen=True, slots=True)
class Compose:
    """Apply mutations left to right."""

    parts: tuple[Mutation, ...]
    name: str = "compose"

    def apply(self, config: EvalConfig) -> EvalConfig:
        for part in self.parts:
            config = part.apply(config)
        return config


DEFAULT_ALIASES: tuple[tuple[str, str], ...] = (
    ("search_datasets", "find_corpora"),
    ("check_constraints", "validate_requirements"),
    ("load_dataset", "fetch_corpus"),
    ("run_analysis", "compute_metric"),
    ("submit_report", "file_report"),
)

CONDITIONS: dict[str, Mutation] = dict(
    zip(
        CONDITION_NAMES,
        (
            Identity(),
            ToolRename(DEFAULT_ALIASES),
            Reformat(),
            MisleadingNames(),
            RubricChange(),
            IncentiveChange(),
            Identity(name="repeat"),
        ),
        strict=True,
    )
)


def condition_config(condition: str) -> EvalConfig:
    """The configuration of a named condition."""
    if condition not in CONDITIONS:
        raise ConfigError.invalid("condition", list(CONDITIONS), condition)
    return CONDITIONS[condition].apply(EvalConfig())


def format_observation(obs: Mapping[str, Any], config: EvalConfig) -> str:
    """Serialise an observation in the configuration's presentation."""
    if config.obs_format == "compact":
        return json.dumps(obs, separators=(",", ":"))
    return json.dumps({"result": reverse_keys(dict(obs))}, indent=2)


def unformat_observation(text: str, config: EvalConfig) -> str:
    """Inverse of :func:`format_observation`: the canonical compact text."""
    if config.obs_format == "compact":
        return text
    obj = json.loads(text)
    return json.dumps(reverse_keys(obj["result"]), separators=(",", ":"))


def invert_episode(episode: Episode, config: EvalConfig) -> Episode:
    """Map a trajectory recorded under ``config`` back to canonical terms: every tool
    name becomes the canonical operation it actually executed, and every observation
    its canonical presentation. Arguments and order are untouched."""
    actual = config.actual_of_shown()
    messages: list[Message] = []
    for m in episode.messages:
        if m.tool_calls:
            calls = [
                ToolCall(id=c.id, name=actual.get(c.name, c.name), arguments=c.arguments)
                for c in m.tool_calls
            ]
            m = m.model_copy(update={"tool_calls": calls})
        elif m.role == "tool":
            content = m.content
            if content is not None:
                content = unformat_observation(content, config)
            m = m.model_copy(update={"name": actual.get(m.name or "", m.name), "content": content})
        messages.append(m)
    return episode.model_copy(update={"messages": messages})

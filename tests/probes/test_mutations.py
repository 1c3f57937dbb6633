"""Mutations: what each changes, what it keeps, and that its inverse maps back."""

from __future__ import annotations

import json

import pytest

from toolaudit.errors import ConfigError
from toolaudit.probes import (
    Compose,
    EvalConfig,
    MisleadingNames,
    Reformat,
    ToolRename,
    invert_episode,
    run_one,
)
from toolaudit.probes._mutations import action_sequence
from toolaudit.probes.harnesses.researchops._harness import RunSpec
from toolaudit.probes.harnesses.researchops._mutations import (
    CONDITIONS,
    DEFAULT_ALIASES,
    condition_config,
    format_observation,
    unformat_observation,
)
from toolaudit.probes.harnesses.researchops._suite import make_task, task_view


def test_conditions_names_are_the_stable_interface() -> None:
    assert list(CONDITIONS) == [
        "original",
        "tool_rename",
        "reformat",
        "misleading_names",
        "rubric_change",
        "incentive_change",
        "repeat",
    ]


def test_condition_config_unknown_name_raises_config_error() -> None:
    with pytest.raises(ConfigError, match="invalid condition='nope'; allowed: 'original'"):
        condition_config("nope")


def test_tool_rename_keeps_descriptions_schemas_and_operations() -> None:
    task = make_task(3, 0)
    base, renamed = task_view(task, EvalConfig()), task_view(task, condition_config("tool_rename"))
    assert [t.name for t in renamed.tools] == [alias for _, alias in DEFAULT_ALIASES]
    assert [t.description for t in renamed.tools] == [t.description for t in base.tools]
    assert [t.parameters for t in renamed.tools] == [t.parameters for t in base.tools]
    actual = condition_config("tool_rename").actual_of_shown()
    assert actual == {alias: canon for canon, alias in DEFAULT_ALIASES}


def test_misleading_names_is_a_derangement_of_domain_tools_with_true_descriptions() -> None:
    cfg = condition_config("misleading_names")
    actual = cfg.actual_of_shown()
    domain = ["search_datasets", "check_constraints", "load_dataset", "run_analysis"]
    assert sorted(actual) == sorted([*domain, "submit_report"])
    assert all(actual[name] != name for name in domain)
    assert actual["submit_report"] == "submit_report"
    view = task_view(make_task(0, 0), cfg)
    by_name = {t.name: t.description for t in view.tools}
    base = {t.name: t.description for t in task_view(make_task(0, 0), EvalConfig()).tools}
    # The description shown under a name is the true description of the operation run.
    assert all(by_name[shown] == base[op] for shown, op in actual.items())


def test_reformat_preserves_values_and_inverse_restores_text() -> None:
    obs = {"candidates": [{"id": "a", "size": 3, "est_score": 0.5}], "n": 1}
    cfg = condition_config("reformat")
    text = format_observation(obs, cfg)
    assert text != format_observation(obs, EvalConfig())
    assert json.loads(text)["result"] == obs  # same values, same array order
    assert list(json.loads(text)["result"]) == ["n", "candidates"]  # keys reversed
    assert unformat_observation(text, cfg) == format_observation(obs, EvalConfig())


def test_compose_applies_left_to_right() -> None:
    cfg = Compose((ToolRename(DEFAULT_ALIASES), Reformat(), MisleadingNames())).apply(EvalConfig())
    assert cfg.obs_format == "wrapped_reversed"
    assert set(cfg.shown_names().values()) == {alias for _, alias in DEFAULT_ALIASES}
    # The aliases themselves are permuted: search now runs under check's alias.
    assert cfg.actual_of_shown()["validate_requirements"] == "search_datasets"
    assert cfg.actual_of_shown()["file_report"] == "submit_report"


def test_invert_episode_maps_renamed_careful_run_onto_original() -> None:
    orig = run_one(RunSpec(5, "careful", "original", 1))
    renamed = run_one(RunSpec(5, "careful", "tool_rename", 1))
    assert orig.action_names() != renamed.action_names()
    back = invert_episode(renamed, condition_config("tool_rename"))
    assert back.action_names() == orig.action_names()
    assert action_sequence(back) == action_sequence(orig)
    assert [m.content for m in back.tool_results()] == [m.content for m in orig.tool_results()]

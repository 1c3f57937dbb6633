"""The ``llm`` policy: how it drives the harness (a scripted fixture model here; the real
embedded model in the slow test)."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from toolaudit.probes import analyze_study, run_probe_study
from toolaudit.probes.agents._llm import LLMAgent, tool_schemas
from toolaudit.probes.harnesses.researchops._harness import RunSpec, run_one
from toolaudit.probes.harnesses.researchops._mutations import condition_config
from toolaudit.probes.harnesses.researchops._suite import make_task, task_view
from toolaudit.traces import ToolCall


class _FixtureModel:
    """TEST FIXTURE (not an agent model): first a reply whose tool call does not parse,
    then a search, then a submit of the first candidate. Records the seeds it was given."""

    identity = "fixture-model"

    def __init__(self) -> None:
        self.seeds: list[int | None] = []
        self.tools_seen: list[list[dict]] = []

    def generate(
        self, messages, tools=None, *, max_tokens=256, temperature=0.0, seed=None, stop=()
    ):
        self.seeds.append(seed)
        self.tools_seen.append(list(tools or []))
        step = sum(m["role"] == "assistant" for m in messages)
        names = [t["function"]["name"] for t in tools or []]
        if step == 0:
            return SimpleNamespace(
                text="",
                raw='<tool_call>{"name": oops}</tool_call>',
                tool_calls=(),
                parse_errors=("invalid JSON in <tool_call>",),
                finish_reason="stop",
            )
        if step == 1:
            call = ToolCall(id="c1", name=names[0], arguments={"query": "x"})
        else:
            call = ToolCall(
                id="c2", name=names[-1], arguments={"dataset_id": "ds-00-0", "score": 0.5}
            )
        return SimpleNamespace(
            text="", raw="", tool_calls=(call,), parse_errors=(), finish_reason="tool_calls"
        )


def _agent(model: _FixtureModel, **kw) -> LLMAgent:
    return LLMAgent("fixture", temperature=0.7, loader=lambda spec: model, **kw)


def test_tool_schemas_are_openai_functions_with_shown_names() -> None:
    view = task_view(make_task(0, 0), condition_config("tool_rename"))
    schemas = tool_schemas(view)
    assert [s["function"]["name"] for s in schemas] == [t.name for t in view.tools]
    assert (
        schemas[0]["type"] == "function"
        and schemas[0]["function"]["parameters"]["type"] == "object"
    )


def test_llm_run_keeps_unparsed_calls_and_records_agent_info() -> None:
    model = _FixtureModel()
    ep = run_one(
        RunSpec(0, "llm", "original", 0, agent=(("model", "fixture"),)),
        agents={"llm": lambda: _agent(model)},
    )
    info = ep.source["agent_info"]
    assert info["generations"] == 3 and info["submitted"] is True
    assert len(info["parse_errors"]) == 1
    assert info["parse_errors"][0]["raw"].startswith("<tool_call>")
    assert ep.action_names() == ["search_datasets", "submit_report"]
    assert info["temperature"] == 0.7 and info["model"] == "fixture-model"


def test_llm_seed_differs_between_original_and_repeat() -> None:
    seeds = []
    for cond in ("original", "repeat", "original"):
        model = _FixtureModel()
        run_one(
            RunSpec(3, "llm", cond, 1, agent=(("model", "fixture"),)),
            agents={"llm": lambda m=model: _agent(m)},
        )
        seeds.append(model.seeds[0])
    assert seeds[0] != seeds[1] and seeds[0] == seeds[2]


def test_llm_step_limit_is_recorded() -> None:
    model = _FixtureModel()
    ep = run_one(
        RunSpec(0, "llm", "original", 0), agents={"llm": lambda: _agent(model, max_steps=1)}
    )
    assert ep.source["agent_info"]["hit_step_limit"] is True
    assert ep.source["agent_info"]["submitted"] is False


@pytest.mark.slow
def test_llm_study_with_embedded_qwen_and_real_judge(tmp_path: Path) -> None:
    """The real embedded instruct model as agent and judge: one task, original and repeat
    (about 15 minutes on 2 loaded cores)."""
    from toolaudit.probes import JudgeConfig
    from toolaudit.probes.agents._llm import llm_factory

    opts = {"model": "embedded:qwen", "temperature": 0.7, "max_steps": 2}
    run_probe_study(
        tmp_path,
        tasks=[0],
        n_seeds=1,
        policies=["llm"],
        conditions=["original", "repeat"],
        agents={"llm": llm_factory("embedded:qwen", temperature=0.7, max_steps=2)},
        agent_options={"llm": opts},
    )
    result = analyze_study(
        tmp_path,
        n_boot=100,
        judge=JudgeConfig(model="embedded:qwen", n_repeats=2, n_records=1),  # the seed protocol
    )
    assert result["policies_run"] == ["llm"]
    agent = result["agents"][0]
    assert agent["runs"] == 2 and agent["generations"] >= 2
    assert [r["policy"] for r in result["repeat_control"]] == ["llm"]
    assert result["judge"]["simulated"] is False
    assert result["judge"]["n_verdicts"] == 1 * 4 * 2  # original, repeat, tool_rename, reformat

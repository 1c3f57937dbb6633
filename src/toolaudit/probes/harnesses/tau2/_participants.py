"""Who takes part in one tau2-bench run: the scripted agent and user, the user's own
registered agent class, or the toolaudit model agent and user simulator, each built with
the tool list and policy as the condition shows them. Imports the agents and tau2 (through
the harness's own modules); never the analysis.
"""

from __future__ import annotations

from typing import Any

from toolaudit.probes.agents.script import SCRIPTED
from toolaudit.probes.harnesses.tau2._bench import MutatedEnvironment, one_line, require_tau2
from toolaudit.probes.harnesses.tau2._records import RunSettings, Tau2RunSpec, reference


def registered_agent(name: str) -> Any:
    """An agent class from tau2's registry: ``NAME``, or ``module:NAME`` whose module is
    imported first (its registration runs then). Refuses in one line otherwise."""
    import importlib

    from toolaudit.errors import ConfigError

    registry = require_tau2()
    module, _, key = name.rpartition(":")
    if module:
        try:
            importlib.import_module(module)
        except Exception as exc:
            raise ConfigError(
                f"--agent {name}: cannot import {module!r} ({one_line(exc)})"
            ) from None
    if key not in registry.get_agents():
        raise ConfigError(
            f"--agent {name}: no agent {key!r} in tau2's registry (registered: "
            f"{', '.join(sorted(registry.get_agents()))})"
        )
    return registry.get_agent_constructor(key)


def participants(
    harness: RunSettings, spec: Tau2RunSpec, task: Any, menv: MutatedEnvironment
) -> tuple[Any, Any, list[Any]]:
    """The agent, the user and the model speakers of one run of ``harness``: the scripted
    pair, the user's registered agent, or the toolaudit model agent and user simulator."""
    from toolaudit.probes.harnesses.tau2 import _agents

    tools, policy = menv.shown_tools(), menv.shown_policy()
    if spec.policy in SCRIPTED:
        from toolaudit.probes.agents.script import Cursor

        cursor = Cursor(reference(task))
        agent = _agents.ScriptedAgent(
            tools,
            policy,
            policy=spec.policy,
            cursor=cursor,
            descriptions=harness.domain.descriptions(),
        )
        return agent, _agents.ScriptedUser(cursor), []
    if spec.policy == "agent":
        return _registered_agent(harness, task, menv, tools, policy)
    if harness.model is None or harness.user_model is None:
        raise ValueError(f"policy {spec.policy!r} needs a model (--model)")
    seed = spec.run_seed()
    temperature = 0.0 if harness.temperature is None else harness.temperature
    speaker = _agents.Speaker(harness.lm(harness.model, "agent"), harness.model,
                              temperature=temperature, max_tokens=harness.max_tokens,
                              seed=seed, requestor="assistant")  # fmt: skip
    listener = _agents.Speaker(harness.lm(harness.user_model, "user"), harness.user_model,
                               temperature=temperature, max_tokens=harness.max_tokens,
                               seed=seed + 7919, requestor="user")  # fmt: skip
    try:
        user_tools = menv.env.get_user_tools()
    except Exception:  # a domain without user tools (tau2 does the same)
        user_tools = None
    agent = _agents.ModelAgent(tools, policy, speaker=speaker)
    user = _agents.ModelUser(
        instructions=str(task.user_scenario), tools=user_tools, speaker=listener
    )
    return agent, user, [speaker, listener]


def _registered_agent(
    harness: RunSettings, task: Any, menv: MutatedEnvironment, tools: list[Any], policy: str
) -> tuple[Any, Any, list[Any]]:
    """The user's own agent class from tau2's registry, built as ``tau2 run`` builds
    an agent (tools and policy as shown; ``llm`` and ``llm_args`` where it takes
    them), with the model user simulator (``user_model``) or the instructed user."""
    import inspect as pyinspect

    from toolaudit.probes.harnesses.tau2 import _agents

    cls = registered_agent(str(harness.agent))
    params = pyinspect.signature(cls).parameters
    kwargs: dict[str, Any] = {"tools": tools, "domain_policy": policy}
    if "llm" in params:
        kwargs["llm"] = harness.agent_llm
    if "llm_args" in params:
        kwargs["llm_args"] = dict(harness.agent_llm_args or {})
    agent = cls(**kwargs)
    if harness.user_model is None:
        return agent, _agents.InstructedUser(str(task.user_scenario.instructions)), []
    listener = _agents.Speaker(harness.lm(harness.user_model, "user"), harness.user_model,
                               temperature=harness.temperature or 0.0,
                               max_tokens=harness.max_tokens, seed=0, requestor="user")  # fmt: skip
    user = _agents.ModelUser(instructions=str(task.user_scenario), tools=None,
                             speaker=listener)  # fmt: skip
    return agent, user, [listener]

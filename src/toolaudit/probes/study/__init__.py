"""Probe studies end to end: run a study's specs, read its records back, analyse them and
write ``probe.json``.

``_run`` (the study runner every harness shares: records, resume, canonical order),
``_records`` (a study's records read back and reduced through the harnesses' readers),
``_probe`` (the ResearchOps study and the analysis of any study folder), ``_config`` (the
ResearchOps study's options), ``_inspect`` and ``_tau2`` (the options and runs of an Inspect
and a tau2-bench study), ``_runconfig`` (the options a folder was run with) and ``_parity``
(two harnesses' studies of one benchmark compared).

The top floor beside the contracts: may import the harnesses, the agents, the judges and
the analysis.
"""

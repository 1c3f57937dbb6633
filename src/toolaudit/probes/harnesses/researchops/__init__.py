"""The ResearchOps suite as a harness: ``_suite`` (25 generated research tasks, their
environment and the views an agent is shown), ``_verifier`` (the composite verifier and its
known defects), ``_mutations`` (the suite's evaluation configurations, composable and each
with its inverse) and ``_harness`` (one run, the study's specs, the reader).

May import the seam, the shared mutations and the agents; never the analysis, the judges,
the report or a study.
"""

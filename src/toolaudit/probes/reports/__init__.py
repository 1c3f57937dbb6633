"""The report sections of a probe study: ``_study`` (the ResearchOps study and the paired
comparison of result files: tables, figures, sentences), ``_harness`` (a harness study on
Inspect or tau2-bench) and ``_parity`` (two harnesses compared task by task).

Renders analysed results; may import the analysis and ``toolaudit.report``, never a
harness, a study or a contract.
"""

"""The analysis of a probe study: what the records say, whichever harness made them.

``_runs`` (records reduced to runs through a reader it is given; gaps, rescored gaps,
MSR/MTR/PTD, behaviour change, equivalence, McNemar), ``_stats`` (replicates, pass^k,
corrected equivalence), ``_controls`` (the repeat, no-op and positive controls),
``_findings`` (every conclusion as a computed Finding) and ``_sentences`` (each finding's
sentence), ``_summaries`` (the headline findings and per-agent summaries),
``_selection`` (selection vs held-out), ``_transcripts`` (paired transcripts),
``_outcomes`` (error and unscorable outcomes), ``_record_checks`` (a study's records
checked against its options), ``_procedure_reasons`` (a judge's reason classified),
``_parity_tasks`` (why two harnesses' tasks differ) and ``_compare`` (two result files as a
paired comparison).

May import the seam, the shared mutations, the agents' names and ``toolaudit.stats``,
``report`` (Finding) and ``traces``; never a harness, a judge, a study, a contract or the
report layouts (``tests/probes/test_layout.py`` enforces it).
"""

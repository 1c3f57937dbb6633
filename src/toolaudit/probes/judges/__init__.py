"""One judge protocol, for ``probe judge-audit`` (the seed's audit of fixed trajectories)
and the probe study's judge (``probe run|analyze --judge-model``).

``_views`` (what the judge reads under each view: the seed's presentation views and the
content cuts, and the context of criteria, policy and tools), ``_prompts`` (the prompts
and the one payload of a call), ``_replies`` (reading a verdict and its reason), ``_run``
(choosing records, gathering contexts, asking every judge for every record, view and
repeat with a seed per call, resumably), ``_study`` (the study's judge through the same
run), ``_records`` (verdict records and their audit: flip rates, κ against the benchmark),
``_seed`` and ``_seed_report`` (the seed's statistics and their report section), ``_traces``
(``probe judge-audit`` end to end).

Judges read Episodes, never a harness's internals: they may import the shared mutations,
the analysis's reason classes, ``toolaudit.models``, ``stats``, ``report`` and ``traces``;
never a harness, a study or a contract.
"""

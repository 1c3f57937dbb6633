"""Each audit's first-screen headline is computed from its result: change the finding and
the verdict line changes."""

from __future__ import annotations

from typing import Any

from toolaudit.audits import ResultMeta, audit_headline, load_audit
from toolaudit.report import headline_sentence


def _meta(**config: Any) -> ResultMeta:
    return ResultMeta(command="test", seed=0, config=config)


def _line(name: str, doc: dict[str, Any]) -> str:
    audit = load_audit(name)
    result = audit.result_model.model_validate({"meta": _meta(**doc.pop("config", {})), **doc})
    return headline_sentence(audit.title, audit_headline(audit, result))


def _leakage(tool3: tuple[float, float, float], full: float) -> dict[str, Any]:
    def row(scope: str, auroc: float, lo: float, hi: float) -> dict[str, Any]:
        return {"scope": scope, "features": "char_wb_3_5", "auroc": auroc,
                "ci95": [lo, hi], "by_group": {}}  # fmt: skip

    return {
        "scopes": [row("full", full, full - 0.05, full + 0.05), row("tool_3", *tool3),
                   row("tool_1", 0.52, 0.45, 0.59)],
        "provenance": {"features": [], "classes": []},
        "prefix_lookup": None, "dilution": None, "partition": {}, "tools": ["tool_1", "tool_3"],
    }  # fmt: skip


def test_leakage_headline_follows_the_top_tool_interval() -> None:
    out = _line("leakage", _leakage((0.70, 0.65, 0.75), 0.55))
    within = _line("leakage", _leakage((0.60, 0.50, 0.70), 0.55))
    assert "stands_out — tool_3: AUROC 0.700 [0.650, 0.750]" in out
    assert "vs full trace 0.550" in out
    assert "within — tool_3: AUROC 0.600" in within


def test_leakage_headline_prefers_the_verdict_block() -> None:
    doc = _leakage((0.70, 0.65, 0.75), 0.55)
    doc["verdict"] = {"verdict": "localized", "tool": "thermompnn_ddg", "auroc": 0.64,
                      "ci95": [0.6, 0.67]}  # fmt: skip
    line = _line("leakage", doc)
    assert "localized — thermompnn_ddg: AUROC 0.640 [0.600, 0.670]" in line
    doc = _leakage((0.70, 0.65, 0.75), 0.55)
    doc["verdict"] = {"verdict": "at_chance", "tool": "thermompnn_ddg", "auroc": 0.52}
    assert "at_chance — thermompnn_ddg: AUROC 0.520" in _line("leakage", doc)


def test_leakage_headline_reads_the_verdict_block_run_leakage_writes() -> None:
    # leakage.json's verdict: kind, carrier and the evidence rows (prefix and text scopes)
    doc = _leakage((0.70, 0.65, 0.75), 0.55)
    rows = [
        {"scope": "thermompnn_ddg", "features": "prefix 2 char", "auroc": 0.96, "ci": [0.94, 0.98]},
        {"scope": "thermompnn_ddg", "features": "char_wb_3_5", "auroc": 0.775, "ci": [0.7, 0.85]},
    ]
    doc["verdict"] = {"kind": "localized", "carrier": "thermompnn_ddg",
                      "evidence": {"details": {"candidates": rows}}}  # fmt: skip
    # the carrier's own scope, labelled as a scope AUROC (the prefix lookup is another
    # quantity, stated second in the section's sentence)
    assert "localized — thermompnn_ddg (char_wb_3_5): scope AUROC 0.775 [0.700, 0.850]" in _line(
        "leakage", doc
    )
    doc["verdict"] = {"kind": "none", "carrier": None, "evidence": {}}
    assert _line("leakage", doc).split("](")[0].count("none") == 1


def _variant(
    name: str, delta: float | None, ci: list[float | None] | None, auroc: float = 0.9
) -> dict[str, Any]:
    a = auroc - (delta or 0.0)
    return {
        "name": name, "placeholder": None, "auroc": a,
        "ci95": [a - 0.08, a + 0.08], "delta": delta, "delta_ci95": ci, "p_value": None,
        "by_group": {}, "by_group_delta": {}, "replacements": 0,
        "replacements_by_location": {}, "rows_affected": 0, "distinct_values": 0,
        "residuals": 0, "valid_rate": None, "option_mass": None,
    }  # fmt: skip


def _redaction(pdb: list[float], peptide: list[float], auroc: float = 0.9) -> dict[str, Any]:
    return {
        "variants": [_variant("original", None, None, auroc),
                     _variant("pdb_id", pdb[0], pdb[1:]),
                     _variant("peptide", peptide[0], peptide[1:])],
        "calls": {}, "model": "m", "scoring": "s", "invalid_score": 0.0, "rows": 10,
        "positives": 5, "groups": {}, "classes": [],
    }  # fmt: skip


def test_redaction_headline_reads_pdb_id_against_the_peptide_control() -> None:
    # ΔA = A_orig − A_redacted: positive is performance lost.
    dep = _line("redaction", _redaction([0.4, 0.3, 0.5], [0.0, -0.05, 0.05]))
    both = _line("redaction", _redaction([0.4, 0.3, 0.5], [0.2, 0.1, 0.3]))
    none = _line("redaction", _redaction([0.02, -0.06, 0.1], [0.0, -0.05, 0.05]))
    assert ": dependence — pdb_id redacted" in dep
    assert "ΔA 0.400 [0.300, 0.500]" in dep and "vs peptide ΔA 0.000" in dep
    assert ": nonspecific_drop —" in both
    assert ": no_dependence —" in none
    # The same null ΔA from a model at chance on the original rows says nothing.
    chance = _line("redaction", _redaction([0.02, -0.06, 0.1], [0.0, -0.05, 0.05], auroc=0.52))
    assert ": not_informative —" in chance


def test_redaction_report_says_when_the_dependence_test_is_not_informative() -> None:
    from toolaudit.redaction import RedactionResults
    from toolaudit.redaction._report import interpretation

    def text(auroc: float) -> str:
        doc = _redaction([0.02, -0.06, 0.1], [0.0, -0.05, 0.05], auroc=auroc)
        return interpretation(RedactionResults.model_validate({"meta": _meta(), **doc}))

    assert "not informative for this model" in text(0.50)
    assert "AUROC 0.500, 95% interval [0.420, 0.580] includes 0.5" in text(0.50)
    assert "not informative" not in text(0.90)
    assert "zero width" not in text(0.50)
    # every row scored alike (the generate study's constant "<answer>1"): a zero-width
    # interval, said in words
    doc = _redaction([0.0, 0.0, 0.0], [0.0, 0.0, 0.0], auroc=0.5)
    doc["variants"][0]["ci95"] = [0.5, 0.5]
    flat = interpretation(RedactionResults.model_validate({"meta": _meta(), **doc}))
    assert "95% interval [0.500, 0.500] includes 0.5" in flat
    assert "The interval has zero width" in flat and "every row the same score" in flat


def _probe(rescored_ci: list[float], changed: float) -> dict[str, Any]:
    cell = {"policy": "careful", "condition": "tool_rename", "vrg": 0.3,
            "vrg_ci95": [0.2, 0.4], "vrg_rescored": sum(rescored_ci) / 2,
            "vrg_rescored_ci95": rescored_ci, "behavior_changed_rate": changed, "n_pairs": 20}  # fmt: skip
    return {"cells": [cell], "policies": [], "repeat_control": [], "findings": {},
            "records": 0, "tasks": 0, "policies_run": [], "conditions": []}  # fmt: skip


def test_probe_headline_is_the_careful_rename_attribution() -> None:
    rule = _line("probe", _probe([-0.05, 0.05], 0.0))
    unexplained = _line("probe", _probe([0.1, 0.3], 0.0))
    behaviour = _line("probe", _probe([0.1, 0.3], 0.5))
    assert ": scoring_rule — careful × tool_rename: gap 0.300 [0.200, 0.400]" in rule
    assert "rescored gap 0.000 [-0.050, 0.050]; actions changed in 0% of pairs" in rule
    assert ": unexplained —" in unexplained
    assert ": behaviour —" in behaviour and "actions changed in 50% of pairs" in behaviour


def test_probe_compare_headline_is_the_equivalence_verdict() -> None:
    def doc(verdict: str, ci: list[float]) -> dict[str, Any]:
        return {"config": {"a": "base__x.json", "b": "ft__x.json"}, "paired_tasks": 40,
                "delta": sum(ci) / 2, "delta_ci90": ci, "equivalence": verdict}  # fmt: skip

    eq = _line("probe_compare", doc("equivalent", [-0.05, 0.05]))
    no = _line("probe_compare", doc("inconclusive", [-0.15, 0.15]))
    assert ": equivalent — ft − base: reward Δ 0.000 [-0.050, 0.050] (90% interval)" in eq
    assert ": inconclusive —" in no and "n = 40" in no
    assert "no verdict stated" in _line("probe_compare", {})


def test_faults_headline_counts_s0_rises_with_the_sign_test() -> None:
    def doc(up: int, p: float) -> dict[str, Any]:
        cell = {"arm": "failed", "k": 0, "n": 10, "n_ds0_pos": up, "p_sign_ds0": p}
        return {"rows": [], "skipped": [], "counts": {}, "summary": {"cells": [cell]}}

    rises = _line("faults", doc(9, 0.02))
    flat = _line("faults", doc(5, 1.0))
    assert ": s0_rises — failed tool return, step 0:" in rises
    assert "0.900" in rises and "p = 0.02" in rises and "n = 10" in rises
    assert ": no_clear_rise —" in flat and "0.500" in flat


def test_faults_headline_on_too_few_tasks_for_the_sign_test_is_the_separation() -> None:
    def doc(inside: int, up: int = 2) -> dict[str, Any]:
        cell = {"arm": "failed", "k": 0, "n": 2, "n_ds0_pos": up, "p_sign_ds0": 0.5}
        sep = {"n_failed": 2, "failed_min": 0.9, "n_others": 6, "others_max": 0.2,
               "n_others_inside": inside}  # fmt: skip
        summary = {"cells": [cell], "s0_separation": {"per_token": sep}}
        return {"rows": [], "skipped": [], "counts": {}, "summary": summary}

    assert ": s0_separates — failed tool return, step 0:" in _line("faults", doc(0))
    assert ": no_clear_rise —" in _line("faults", doc(1))  # another arm reaches it
    assert ": no_clear_rise —" in _line("faults", doc(0, up=1))  # not up on every task


def test_traces_headline_counts_files_episodes_and_calls() -> None:
    def f(episodes: int) -> dict[str, Any]:
        return {"format": "tau2", "path": "p", "episodes": episodes, "tasks": 1,
                "tool_calls": 3, "tool_results": 3, "mean_reward": None}  # fmt: skip

    assert "2 files read — 5 episodes, 6 tool calls" in _line("traces", {"files": [f(2), f(3)]})
    assert "1 files read — 7 episodes" in _line("traces", {"files": [f(7)]})


def test_an_audit_without_headline_states_no_verdict() -> None:
    line = headline_sentence("Datasets", None, note="0 fallbacks")
    assert line == "Datasets: no verdict stated at this size (0 fallbacks)"
    assert audit_headline(load_audit("datasets"), None) is None  # type: ignore[arg-type]


def test_leakage_headline_names_family_wise_intervals_as_such() -> None:
    """The verdict rule's intervals are Bonferroni-adjusted (95% jointly over its
    comparisons); the first screen says so instead of calling them 95% intervals, for a
    carrier read from the rule's candidates and for the scope a `none` verdict turned on
    (issue 26: the tau2 line called one interval both)."""
    from toolaudit.leakage._contract import verdict_finding
    from toolaudit.report._cards import verdict_card

    details = {"family_level": 0.9929, "candidates": [
        {"scope": "t", "features": "prefix 2 char", "auroc": 0.962, "ci": [0.94, 0.98]},
        {"scope": "t", "features": "char_wb_3_5", "auroc": 0.775, "ci": [0.678, 0.865]}]}  # fmt: skip
    localized = {"kind": "localized", "carrier": "t", "evidence": {"details": details}}
    line = headline_sentence("Leakage", verdict_finding(localized))
    assert line == (
        "Leakage: localized — t (char_wb_3_5): scope AUROC 0.775 [0.678, 0.865] "
        "(family-wise 95% interval)"
    )
    evidence = {"value": 0.611, "interval": [0.436, 0.794], "subject": "cancel", "n": 70,
                "details": {"family_level": 0.9989, "features": "word_1_2"}}  # fmt: skip
    none = verdict_finding({"kind": "none", "carrier": None, "evidence": evidence})
    line = headline_sentence("Leakage", none)
    assert line == (
        "Leakage: none — strongest scope cancel (word_1_2): scope AUROC 0.611 [0.436, 0.794] "
        "(family-wise 95% interval), n = 70"
    )
    assert "(family-wise 95% interval 0.436 to 0.794)" in verdict_card("Leakage", none).sentence
    assert line.count("interval") == 1


def test_a_zero_width_interval_over_many_clusters_is_a_verdict_not_missing_data() -> None:
    """The demo's planted scoring-rule defect moved each of 25 tasks by exactly 0.25: its
    interval [0.250, 0.250] over 75 pairs is certain, and the card says PROBLEM FOUND
    (it said "not enough data"). An interval without bounds (one cluster, or one pair)
    stays insufficient, in words."""
    from toolaudit.report import Finding
    from toolaudit.report._cards import verdict_card

    certain = Finding(name="probe.attribution.careful.tool_rename", verdict="scoring_rule",
                      value=0.25, interval=(0.25, 0.25), level=0.95, n=75,
                      subject="careful × tool_rename")  # fmt: skip
    card = verdict_card("Probe", certain)
    assert card.severity == "problem" and "(95% interval 0.250 to 0.250)" in card.sentence
    nan = float("nan")
    one = Finding(name="probe.repeat_control.llm", verdict="rerun_flips", value=1.0,
                  interval=(nan, nan), level=0.95, n=3, subject="llm")  # fmt: skip
    card = verdict_card("Probe LLM", one)
    assert card.severity == "insufficient" and "(interval not estimable)" in card.sentence


def test_first_screen_counts_read_as_a_person_writes_them() -> None:
    """Issue 44: "rises in 1.000 of tasks ... but 1 tasks are too few" and "1 sample(s)
    (interval not estimable)" on the demo's first screen."""
    import re

    from toolaudit.report import Finding
    from toolaudit.report._cards import verdict_card

    nan = float("nan")
    separates = Finding(name="faults.s0", verdict="s0_separates", value=1.0, n=1,
                        subject="failed")  # fmt: skip
    flips = Finding(name="probe.repeat_control.llm", verdict="rerun_flips", value=1.0,
                    interval=(nan, nan), level=0.95, n=1, subject="llm")  # fmt: skip
    rises = Finding(name="faults.s0", verdict="s0_rises", value=0.94, n=50, p_value=1e-9,
                    test="sign test", subject="failed")  # fmt: skip
    sentences = [verdict_card("t", f).sentence for f in (separates, flips, rises)]
    assert "in 1 of 1 task and" in sentences[0] and "but 1 task is too few" in sentences[0]
    assert "verdict: 1 sample (interval not estimable) cannot support one" in sentences[1]
    assert "in 47 of 50 tasks" in sentences[2]
    for text in sentences:
        assert not re.search(r"\b1 tasks\b|\(s\)|\d\.\d{3} of tasks", text), text

"""The leakage sentences state what the verdict rule decided, from the numbers they cite
(issue 44): the two AUROCs of a localized carrier labelled apart, the strongest tool
against chance and the full trace as the rule reads them, and intervals below chance."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from toolaudit.leakage._verdict import ScoredScope, decide
from toolaudit.leakage._wording import (
    below_chance_note,
    rule_intervals,
    strongest_tool_sentence,
    verdict_sentence,
)
from toolaudit.report import Finding
from toolaudit.stats import auroc


def _comparison(scope: str, a: float, ci: list[float], delta: list[float]) -> dict[str, Any]:
    return {"scope": scope, "features": "word_1_2", "auroc": a, "ci": ci,
            "minus_full": {"delta": delta[0], "ci": delta[1:], "level": 0.9989}}  # fmt: skip


# The demo's airline numbers (issue 44): cancel_reservation's per-scope 95% interval
# [0.496, 0.748] lay above the full trace's point estimate, and the section said so;
# the rule reads the family-wise intervals, which hold 0.5 and 0 (verdict: none).
AIRLINE = {
    "family_level": 0.9989,
    "comparisons_m": 46,
    "features": "word_1_2",
    "full": {"word_1_2": {"auroc": 0.515, "ci": [0.327, 0.727], "above_chance": False}},
    "comparisons": [
        _comparison("cancel_reservation", 0.611, [0.436, 0.794], [0.096, -0.232, 0.368]),
        _comparison("get_user_details", 0.447, [0.267, 0.634], [-0.068, -0.3, 0.2]),
    ],
}


def test_strongest_tool_sentence_reads_the_rule_not_the_point_estimate() -> None:
    text = strongest_tool_sentence(AIRLINE, "word_1_2")
    assert text is not None
    assert "strongest single tool is cancel_reservation, at scope AUROC 0.611, family-wise " in text
    assert "not reliably above chance (its interval holds 0.5)" in text
    assert (
        "not reliably above the full trace (0.515; difference +0.096, family-wise 95% CI "
        "[-0.232, +0.368], which holds 0)"
    ) in text
    assert "does not call this one localized" in text and "wholly above" not in text


def test_strongest_tool_sentence_names_a_localized_candidate_when_both_hold() -> None:
    details = {**AIRLINE, "comparisons": [
        _comparison("cancel_reservation", 0.811, [0.636, 0.934], [0.296, 0.032, 0.468])]}  # fmt: skip
    text = strongest_tool_sentence(details, "word_1_2")
    assert text is not None
    assert "above chance (its interval lies above 0.5)" in text
    assert "reliably above the full trace (0.515; difference +0.296" in text
    assert "counts it as a localized candidate" in text


def _decided(shift: float, seed: int) -> Finding:
    """The rule on scores built for it: a label-free full trace and one tool whose
    score moves with the label by ``shift`` standard deviations."""
    rng = np.random.default_rng(seed)
    y = (rng.random(80) < 0.4).astype(int)
    full, tool = rng.normal(size=80), rng.normal(size=80) + shift * y
    scoped = [ScoredScope(name, "word_1_2", auroc(y, s), (0.0, 1.0), s)
              for name, s in (("full", full), ("tool", tool))]  # fmt: skip
    return decide(scoped, y, prefix=None, prefix_class=None, carrier_class=None,
                  presence=None, n_boot=200, seed=seed)  # fmt: skip


@pytest.mark.parametrize("shift", [0.0, 0.4, 0.8, 3.0])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_strongest_tool_sentence_agrees_with_the_verdict(shift: float, seed: int) -> None:
    finding = _decided(shift, seed)
    text = strongest_tool_sentence(finding.details, "word_1_2")
    assert text is not None
    assert ("localized candidate" in text) == (finding.verdict == "localized"), (
        finding.verdict,
        text,
    )
    iv = rule_intervals(finding.details)[("tool", "word_1_2")]
    assert f"[{iv[0]:.3f}, {iv[1]:.3f}]" in text  # the interval the rule read


LOCALIZED = {
    "family_level": 0.9929,
    "comparisons_m": 7,
    "carrier_class": "t.path",
    "full": {"char_wb_3_5": {"auroc": 0.555, "ci": [0.447, 0.658], "above_chance": False}},
    "comparisons": [
        {
            "scope": "t",
            "features": "char_wb_3_5",
            "auroc": 0.775,
            "ci": [0.678, 0.865],
            "minus_full": {"delta": 0.220, "ci": [0.098, 0.330]},
        },
    ],  # fmt: skip
    "prefix": {
        "class": "t.path",
        "chars": "2 char",
        "auroc": 0.962,
        "ci": [0.940, 0.984],
        "minus_full": {"delta": 0.407, "ci": [0.309, 0.523]},
        "full_features": "char_wb_3_5",
    },  # fmt: skip
    "candidates": [
        {
            "scope": "t",
            "features": "prefix 2 char",
            "auroc": 0.962,
            "ci": [0.940, 0.984],
            "class": "t.path",
        },
        {"scope": "t", "features": "char_wb_3_5", "auroc": 0.775, "ci": [0.678, 0.865]},
    ],  # fmt: skip
}


def test_localized_sentence_states_the_scope_first_and_labels_the_prefix_lookup() -> None:
    finding = Finding(name="leakage.verdict", verdict="localized", value=0.962,
                      interval=(0.940, 0.984), n=980, subject="t", details=LOCALIZED)  # fmt: skip
    text = verdict_sentence(finding)
    scope = "scope AUROC 0.775, family-wise 95% CI [0.678, 0.865] (scope table)"
    prefix = (
        "prefix-lookup AUROC 0.962, family-wise 95% CI [0.940, 0.984] "
        "(prefix lookup table, row 2 char)"
    )
    assert scope in text and prefix in text and text.index(scope) < text.index(prefix)
    assert "first 2 characters of its token class `t.path`" in text
    assert (
        "`toolaudit redact DATA --out DIR --model SPEC --class-from LEAKAGE_DIR --class t.path`"
        in text
    )


def test_localized_by_the_prefix_alone_says_the_scope_is_not_reliably_above() -> None:
    details = {**LOCALIZED, "candidates": LOCALIZED["candidates"][:1]}
    details["comparisons"] = [{**LOCALIZED["comparisons"][0], "auroc": 0.58, "ci": [0.47, 0.69],
                               "minus_full": {"delta": 0.03, "ci": [-0.05, 0.11]}}]  # fmt: skip
    finding = Finding(name="leakage.verdict", verdict="localized", value=0.962,
                      interval=(0.940, 0.984), n=980, subject="t", details=details)  # fmt: skip
    text = verdict_sentence(finding)
    assert text.index("prefix-lookup AUROC 0.962") < text.index("scope AUROC 0.580")
    assert "not reliably above chance" in text and "not reliably above the full trace" in text


RETAIL = {
    "family_level": 0.998,
    "comparisons_m": 3,
    "full": {"char_wb_3_5": {"auroc": 0.118, "ci": [0.0, 0.416], "above_chance": False}},
    "comparisons": [{"scope": "get_order_details", "features": "char_wb_3_5", "auroc": 0.088,
                     "ci": [0.0, 0.361], "minus_full": {"delta": -0.03, "ci": [-0.2, 0.1]}}],
}  # fmt: skip


def test_below_chance_note_is_computed_from_the_intervals() -> None:
    finding = Finding(name="leakage.verdict", verdict="none", value=0.118,
                      interval=(0.0, 0.416), n=40, subject="full", details=RETAIL)  # fmt: skip
    note = below_chance_note(finding)
    assert note is not None
    assert note.startswith("Below chance: 2 of the 2 AUROCs the verdict rule reads")
    assert "the full trace among them (char_wb_3_5: 0.118 [0.000, 0.416])" in note
    assert "the lowest is get_order_details (char_wb_3_5), scope AUROC 0.088" in note
    assert "in the direction opposite" in note and "here 40 evaluation examples" in note
    assert "not evidence that there is no signal, nor of a shortcut" in note
    # an upper bound at 0.5 or above is not below chance
    at_chance = {**RETAIL, "full": {"char_wb_3_5": {"auroc": 0.118, "ci": [0.0, 0.52]}},
                 "comparisons": [{**RETAIL["comparisons"][0], "ci": [0.0, 0.5]}]}  # fmt: skip
    assert below_chance_note(finding.model_copy(update={"details": at_chance})) is None

"""Report sentences of the redaction audit are rendered from findings: change the
finding and the sentence changes."""

from __future__ import annotations

from toolaudit.redaction._report import finding_sentence, variant_findings
from toolaudit.report import Finding


def _doc(delta: float, lo: float, hi: float) -> dict:
    base = {"placeholder": None, "p_value": None, "by_group": {}, "by_group_delta": {},
            "replacements_by_location": {}, "rows_affected": 0, "distinct_values": 0,
            "residuals": 0, "valid_rate": 1.0, "option_mass": 1.0}  # fmt: skip
    return {
        "variants": [
            {**base, "name": "original", "auroc": 0.7, "ci95": [0.6, 0.8], "delta": None,
             "delta_ci95": None, "replacements": 0},
            {**base, "name": "pdb_id", "auroc": 0.7 - delta, "ci95": [0.4, 0.6],
             "delta": delta, "delta_ci95": [lo, hi], "replacements": 12},
        ]
    }  # fmt: skip


class _Loaded:
    """Stands for a loaded redaction.json model (anything with ``model_dump``)."""

    def __init__(self, doc: dict) -> None:
        self.doc = doc

    def model_dump(self, mode: str = "python") -> dict:
        return self.doc


def test_variant_findings_read_the_interval_against_zero() -> None:
    loss = variant_findings(_Loaded(_doc(0.2, 0.05, 0.35)))
    none = variant_findings(_Loaded(_doc(0.02, -0.05, 0.09)))
    gain = variant_findings(_Loaded(_doc(-0.2, -0.3, -0.1)))
    assert [f.verdict for f in loss] == ["baseline", "loss"]
    assert [none[1].verdict, gain[1].verdict] == ["no_change", "gain"]
    assert loss[1].interval == (0.05, 0.35) and loss[1].value == 0.2


def test_finding_sentence_changes_with_the_finding() -> None:
    (_, f) = variant_findings(_Loaded(_doc(0.2, 0.05, 0.35)))
    text = finding_sentence(f)
    assert text == (
        "Redacting pdb_id (12 replacements) gives AUROC 0.500, ΔA +0.200 [+0.050, +0.350]: "
        "a significant loss: the model depends on this class."
    )
    changed = f.model_copy(update={"verdict": "no_change", "value": 0.01, "interval": (-0.1, 0.12)})
    assert finding_sentence(changed) != text
    assert "ΔA +0.010 [-0.100, +0.120]: no significant change" in finding_sentence(changed)
    assert isinstance(f, Finding)

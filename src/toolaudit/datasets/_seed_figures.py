"""The seed's published figures for its TCR-pMHC case, for reports on the controlled
benchmark to print beside their own.

Source: ``seeds/leakage-audit-pt2d-redaction.txt`` (the main text and Appendices C, D, E).
The seed fits on cluster C0 and evaluates on C1-C5 (4,898 test rows) of the real TCR
data with a fine-tuned Qwen3-4B; ``tcr-shortcut`` mirrors its layout with a planted
shortcut, so the two are comparable in pattern, not in value. Only published numbers are
here; nothing is derived from them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from toolaudit.datasets._tcr_tools import TCR_TOOLS

__all__ = [
    "SEED_FIGURES",
    "SeedFigures",
    "looks_like_tcr_scopes",
    "looks_like_tcr_redaction",
]

#: The seed's evaluation clusters (its Tables 5, 6 and 8 have one column each).
_CLUSTERS = ("C1", "C2", "C3", "C4", "C5")


@dataclass(frozen=True, slots=True)
class SeedFigures:
    """The published figures, keyed as ``leakage.json`` and ``redaction.json`` key theirs
    (scope ``full`` and the tool names; feature sets ``word_1_2``, ``char_wb_2_5``,
    ``char_wb_3_5``; classes ``pdb_id``, ``peptide``, ``format``)."""

    source: str
    #: Table 1 (Appendix C's classifier table): scope -> feature set -> test AUROC.
    scope_auroc: dict[str, dict[str, float]]
    #: Appendix C, char 3-5 per cluster: scope -> (all, C1..C5).
    scope_by_group: dict[str, tuple[float, ...]]
    #: Table 6, prefix lookup: digits -> (all, C1..C5).
    prefix: dict[int, tuple[float, ...]]
    #: Appendix E, real-tool sweep (char 3-5): |S| -> (AUROC, CI low, CI high).
    real_sweep: dict[int, tuple[float, float, float]]
    #: Appendix E, synthetic additions (five seeds): K -> (mean, sd, min, max).
    synthetic: dict[int, tuple[float, float, float, float]]
    #: Table 7, replacements per redacted class.
    replacements: dict[str, int]
    #: Table 8: variant -> (all, dA, C1..C5); dA is None for the original.
    redaction: dict[str, tuple[float | None, ...]]
    #: The label-balanced no-evidence model's test AUROC (main text).
    no_evidence: float
    clusters: tuple[str, ...] = _CLUSTERS


SEED_FIGURES = SeedFigures(
    source="seeds/leakage-audit-pt2d-redaction.txt",
    scope_auroc={
        "full": {"word_1_2": 0.4818, "char_wb_2_5": 0.4677, "char_wb_3_5": 0.4876},
        TCR_TOOLS[0]: {"word_1_2": 0.4569, "char_wb_2_5": 0.4797, "char_wb_3_5": 0.4733},
        TCR_TOOLS[1]: {"word_1_2": 0.4681, "char_wb_2_5": 0.4839, "char_wb_3_5": 0.4985},
        TCR_TOOLS[2]: {"word_1_2": 0.4946, "char_wb_2_5": 0.6288, "char_wb_3_5": 0.6365},
        TCR_TOOLS[3]: {"word_1_2": 0.4947, "char_wb_2_5": 0.5050, "char_wb_3_5": 0.5015},
        TCR_TOOLS[4]: {"word_1_2": 0.4833, "char_wb_2_5": 0.5259, "char_wb_3_5": 0.5310},
    },
    scope_by_group={
        "full": (0.4876, 0.4888, 0.5413, 0.6359, 0.4565, 0.4216),
        TCR_TOOLS[0]: (0.4733, 0.3769, 0.4687, 0.5548, 0.4881, 0.4403),
        TCR_TOOLS[1]: (0.4985, 0.4997, 0.5957, 0.5708, 0.4706, 0.4160),
        TCR_TOOLS[2]: (0.6365, 0.5566, 0.6392, 0.6109, 0.6999, 0.4874),
        TCR_TOOLS[3]: (0.5015, 0.4510, 0.5369, 0.5727, 0.4878, 0.5037),
        TCR_TOOLS[4]: (0.5310, 0.4982, 0.5018, 0.5445, 0.5702, 0.4717),
    },
    prefix={
        1: (0.6725, 0.5776, 0.5686, 0.6542, 0.7470, 0.5202),
        2: (0.6967, 0.5794, 0.7416, 0.5946, 0.7716, 0.4967),
        3: (0.6793, 0.4820, 0.6522, 0.5614, 0.8442, 0.5817),
    },
    real_sweep={
        1: (0.6365, 0.6008, 0.6704),
        2: (0.6049, 0.5679, 0.6415),
        3: (0.5284, 0.4941, 0.5622),
        4: (0.4956, 0.4605, 0.5291),
        5: (0.4876, 0.4553, 0.5221),
    },
    synthetic={
        0: (0.6365, 0.0000, 0.6365, 0.6365),
        1: (0.5701, 0.0121, 0.5590, 0.5891),
        2: (0.5429, 0.0218, 0.5256, 0.5809),
        5: (0.5064, 0.0259, 0.4821, 0.5489),
        10: (0.4749, 0.0302, 0.4464, 0.5249),
        20: (0.4900, 0.0209, 0.4669, 0.5167),
    },
    replacements={"pdb_id": 50_778, "peptide": 63_674, "format": 3_582_603},
    redaction={
        "original": (0.8136, None, 0.5746, 0.8298, 0.8324, 0.8686, 0.8322),
        "pdb_id": (0.4972, 0.3163, 0.5126, 0.5241, 0.4818, 0.4963, 0.4858),
        "peptide": (0.8152, -0.0017, 0.5763, 0.8535, 0.8437, 0.8646, 0.8295),
        "format": (0.5189, 0.2947, 0.4787, 0.4829, 0.4343, 0.5747, 0.5184),
    },
    no_evidence=0.4928,
)


def looks_like_tcr_scopes(scopes: Sequence[str]) -> bool:
    """Whether a leakage result's scopes are the controlled benchmark's: the full trace
    and exactly its five tools."""
    return set(scopes) == {"full", *TCR_TOOLS}


def looks_like_tcr_redaction(variants: Sequence[str], groups: Sequence[str]) -> bool:
    """Whether a redaction result is the seed's Table 8 set-up: the ``pdb_id`` class
    tested on rows of the seed's evaluation clusters only."""
    return "pdb_id" in variants and bool(groups) and set(groups) <= set(_CLUSTERS)

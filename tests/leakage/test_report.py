"""The leakage report's figures are legible at 1280 px (issue 44): the tau2 shape (15
scopes x 3 feature sets, 20 groups) with no text under 10 px as shown, numbers on the
heatmap in the colour that reads on their cell, and the bar chart on the full 0..1 range."""

from __future__ import annotations

from typing import Any

import numpy as np

from toolaudit.leakage import leakage_sections
from toolaudit.leakage._report import _bar_chart, _heatmap
from toolaudit.report import Figure, text_colour
from toolaudit.report._document import MIN_TEXT_PX

FEATURES = ("word_1_2", "char_wb_2_5", "char_wb_3_5")
SCOPES = ["full", *[f"update_reservation_tool_{i:02d}" for i in range(14)]]
GROUPS = [f"g{i}" for i in range(20)]


def _payload(groups: list[str]) -> dict[str, Any]:
    rng = np.random.default_rng(0)
    rows = []
    for scope in SCOPES:
        for f in FEATURES:
            a = float(rng.uniform(0.05, 0.95))
            by_group = {g: {"auroc": float(rng.choice([0.0, 0.5, 1.0])), "n": 2} for g in groups}
            rows.append({"scope": scope, "features": f, "auroc": a,
                         "ci95": [max(a - 0.15, 0.0), min(a + 0.15, 1.0)], "by_group": by_group})  # fmt: skip
    return {"scopes": rows, "partition": {"description": "grouped 5-fold cross-validation"},
            "provenance": {"features": [], "classes": []}, "warnings": []}  # fmt: skip


def test_leakage_figures_keep_text_legible_at_1280_px() -> None:
    (sec,) = leakage_sections(_payload(GROUPS))
    figures = [b for b in sec.blocks if isinstance(b, Figure)]
    assert len(figures) >= 2
    for fig in figures:
        assert fig.text_px is not None and fig.text_px >= MIN_TEXT_PX - 1e-6, fig.caption


def test_bar_chart_is_horizontal_with_level_labels_and_shows_below_chance() -> None:
    payload = _payload(GROUPS[:2])
    fig = _bar_chart(payload, None)
    (ax,) = fig.axes
    assert [t.get_text() for t in ax.get_yticklabels()] == SCOPES
    assert all(t.get_rotation() == 0 for t in ax.get_yticklabels())
    assert ax.get_xlim() == (0.0, 1.0)  # an AUROC of 0.1 is drawn, not cut off at 0.3


def test_heatmap_numbers_are_white_on_dark_cells_and_black_on_light() -> None:
    payload = _payload(GROUPS[:9])
    fig = _heatmap(payload, "char_wb_3_5", GROUPS[:9])
    ax = fig.axes[0]
    (im,) = ax.get_images()
    assert ax.texts
    for t in ax.texts:
        value = float(t.get_text())
        assert t.get_color() == text_colour(im.cmap(im.norm(value))), value
    colours = {float(t.get_text()): t.get_color() for t in ax.texts}
    assert colours[0.0] == colours[1.0] == "white" and colours[0.5] == "black"

import json

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from toolaudit.report import Section, write_report, write_results
from toolaudit.report._document import render_markdown
from toolaudit.report._meta import run_metadata  # noqa: E402


def test_write_results_nan_becomes_null_and_is_stable(tmp_path):
    payload = {"b": float("nan"), "a": [1.0, float("inf")]}
    p1 = write_results(tmp_path / "x.json", payload)
    first = p1.read_bytes()
    write_results(tmp_path / "x.json", payload)
    assert json.loads(first) == {"a": [1.0, None], "b": None}
    assert first == p1.read_bytes()


def test_run_metadata_records_seed_config_versions():
    meta = run_metadata(command="leakage", seed=3, config={"k": 1})
    assert meta["seed"] == 3 and meta["config"] == {"k": 1}
    assert "numpy" in meta["versions"] and "python" in meta["versions"]


def test_report_html_is_self_contained_with_figure(tmp_path):
    fig, ax = plt.subplots()
    ax.plot([0, 1], [0, 1])
    sec = Section("Leakage").text("hello <b>").table("T", ["a", "b"], [["x", 0.12345]])
    sec.figure("a line", fig)
    html_path = write_report(tmp_path, "Report", [sec])
    html = html_path.read_text()
    assert "data:image/png;base64," in html
    assert "hello &lt;b&gt;" in html and "0.123" in html
    assert "<script" not in html and "http" not in html.split("<body>")[1]
    md = render_markdown("Report", [sec])
    assert "| x | 0.123 |" in md


def test_report_figures_never_switch_the_matplotlib_backend() -> None:
    """Report code uses the object-oriented API only, so a notebook's backend survives."""
    import re
    from pathlib import Path

    import matplotlib

    from toolaudit.report import new_figure
    from toolaudit.report._document import figure_png

    before = matplotlib.get_backend()
    fig, ax = new_figure(figsize=(2.0, 1.5))
    ax.plot([0, 1], [1, 0])
    assert figure_png(fig).startswith(b"\x89PNG")
    assert matplotlib.get_backend() == before
    src = Path(__file__).resolve().parents[2] / "src"
    offenders = [
        str(p.relative_to(src))
        for p in src.rglob("*.py")
        if re.search(r"matplotlib\.use\(|import matplotlib\.pyplot", p.read_text(encoding="utf-8"))
    ]
    assert offenders == []


def test_render_figure_raises_text_too_small_to_read_at_1280_px() -> None:
    """Issue 44: a 15 x 3 bar chart drawn 19.5 inches wide showed 5 px labels once the
    page scaled it to its 1,100 px content width; text below 10 px as shown is
    enlarged, taking the scaling into account, and a legible figure is left alone."""
    from toolaudit.report import new_figure
    from toolaudit.report._document import CONTENT_PX, FIGURE_DPI, MIN_TEXT_PX, render_figure

    fig, ax = new_figure(figsize=(19.5, 3.6))
    ax.bar(range(15), [0.5] * 15)
    ax.set_xticks(range(15), [f"tool_{i}" for i in range(15)], fontsize=5)
    ax.set_title("t", fontsize=6)
    png, text_px = render_figure(fig)
    width = int.from_bytes(png[16:20], "big")
    assert width > CONTENT_PX  # still wide: shown scaled down
    assert text_px >= MIN_TEXT_PX - 1e-6
    shown = min(t.get_fontsize() for t in ax.get_xticklabels()) * FIGURE_DPI / 72
    assert shown * CONTENT_PX / width >= MIN_TEXT_PX - 0.05  # the ticks drawn, as shown

    small, ax = new_figure(figsize=(4.0, 3.0))
    ax.plot([0, 1], [0, 1])
    ax.tick_params(labelsize=9)
    ax.set_xlabel("x", fontsize=9)
    _, text_px = render_figure(small)
    assert text_px == 9 * FIGURE_DPI / 72  # 13.75 px: left as drawn


def test_text_colour_contrasts_with_every_heatmap_cell() -> None:
    """Issue 44: black numbers on the dark ends of RdBu_r; the colour is chosen by the
    cell's luminance, so every cell's number reaches WCAG AA contrast (4.5:1) or the
    best a black-or-white choice allows."""
    from matplotlib import colormaps

    from toolaudit.report import text_colour
    from toolaudit.report._document import relative_luminance

    def contrast(a: float, b: float) -> float:
        return (max(a, b) + 0.05) / (min(a, b) + 0.05)

    cmap = colormaps["RdBu_r"]
    for v in [i / 20 for i in range(21)]:
        cell = relative_luminance(cmap(v))
        text = 0.0 if text_colour(cmap(v)) == "black" else 1.0
        assert contrast(cell, text) >= 4.5, v
    assert text_colour(cmap(1.0)) == text_colour(cmap(0.0)) == "white"
    assert text_colour(cmap(0.5)) == "black"


def test_html_table_caption_spans_the_page_and_long_text_may_wrap() -> None:
    """Issue 44: a <caption> is as wide as its table, so a narrow table squeezed a long
    caption into a column; wide tables scroll in their own box."""
    from toolaudit.report._document import render_html

    long_text = "ine/thermompnn/outputs/ThermoMPNN_inference_2KUH.csv chain_length: 115"
    sec = Section("S").table("a long caption " * 10, ["k", "context"], [["x", long_text]])
    page = render_html("T", [sec])
    assert "<caption" not in page
    assert "<div class='tw'><p class='cap'>a long caption" in page
    assert "<td class='t'>x</td><td class='t l'>ine/thermompnn" in page
    assert ".tw{overflow-x:auto" in page and "td.l{overflow-wrap:anywhere" in page

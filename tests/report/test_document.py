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

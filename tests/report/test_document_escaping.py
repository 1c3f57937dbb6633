"""Report text from traces is data, never markup: Markdown and HTML escaping, control
bytes shown visibly, and the side-by-side transcript block."""

from __future__ import annotations

from pathlib import Path

from toolaudit.report import Section, write_report
from toolaudit.report._document import md_text, render_html, render_markdown, visible

HOSTILE = "a|b <script>alert(1)</script> \x1b[31mred\x1b[0m [x](http://evil.example) \x00end"


def test_visible_shows_control_characters_as_escapes() -> None:
    assert visible("a\x1b[31mb\x00\n") == "a\\x1b[31mb\\x00\\n"
    assert visible("line\nnext", keep="\n") == "line\nnext"
    assert visible("naïve 東京 ok") == "naïve 東京 ok"
    assert visible("\u2028") == "\\u2028"


def test_markdown_escapes_pipes_html_links_and_control_bytes() -> None:
    sec = Section("S").text(HOSTILE).table(HOSTILE, ["tool", "n"], [[HOSTILE, 1]])
    md = render_markdown("Report", [sec])
    assert "\x1b" not in md and "\x00" not in md
    assert "<script>" not in md and "&lt;script&gt;" in md
    assert "\\x1b[31mred" in md and "\\x00end" in md
    assert "](http" not in md.replace("\\](http", "")
    row = next(line for line in md.splitlines() if line.startswith("| a"))
    assert row == "| a\\|b &lt;script&gt;alert(1)&lt;/script&gt; \\x1b[31mred\\x1b[0m " \
        "[x\\](http://evil.example) \\x00end | 1 |"  # fmt: skip


def test_markdown_table_cell_newline_keeps_the_row_on_one_line() -> None:
    md = render_markdown("R", [Section("S").table("c", ["a", "b"], [["one\ntwo", "x"]])])
    assert "| one\\ntwo | x |" in md.splitlines()


def test_html_table_cell_shows_a_backtick_span_as_code_and_nothing_else_as_markup() -> None:
    """Issue 26: Markdown backticks showed literally in table cells (the fallbacks'
    "keep `toolaudit demo` within its budget"); other Markdown stays text."""
    cell = "keep `toolaudit demo` fast; *not* `<b>` [x](http://e.x)"
    page = render_html("R", [Section("S").table("c", ["what"], [[cell]])])
    assert (
        "<td class='t l'>keep <code>toolaudit demo</code> fast; *not* <code>&lt;b&gt;</code> "
        "[x](http://e.x)</td>"
    ) in page


def test_html_has_no_raw_escape_bytes_and_escapes_markup(tmp_path: Path) -> None:
    sec = Section(HOSTILE).text(HOSTILE).table("c", [HOSTILE], [[HOSTILE]])
    page = write_report(tmp_path, HOSTILE, [sec]).read_text(encoding="utf-8")
    assert "\x1b" not in page and "\x00" not in page
    assert "<script>" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "\\x1b[31mred" in page
    assert md_text("<b>|") == "&lt;b&gt;\\|"


def test_transcript_block_is_collapsible_escaped_and_deterministic(tmp_path: Path) -> None:
    clean = [("assistant", "get_order(#W1)"), ("tool", '{"status": "delivered"}')]
    faulted = [("assistant", "get_order(#W1)"), ("tool", "Error: </pre><script>x</script>\x1b[2J")]
    sec = Section("Faults").transcript("task 7, arm failed", clean, faulted)
    page = render_html("R", [sec])
    assert "<details><summary>task 7, arm failed</summary>" in page
    assert page.count("<pre>") == 2 and "<script>" not in page and "\x1b" not in page
    assert "Error: &lt;/pre&gt;&lt;script&gt;x&lt;/script&gt;\\x1b[2J" in page
    assert "<h4>clean</h4>" in page and "<h4>faulted</h4>" in page
    assert "<script" not in page.lower().replace("&lt;script", "")  # no JavaScript at all
    md = render_markdown("R", [sec])
    assert "*clean*" in md and "*faulted*" in md and '[tool] {"status": "delivered"}' in md
    assert "\x1b" not in md
    first = write_report(tmp_path / "a", "R", [sec]).read_bytes()
    assert write_report(tmp_path / "b", "R", [sec]).read_bytes() == first


def test_transcript_fence_outgrows_backticks_in_the_content() -> None:
    sec = Section("S").transcript("c", [("tool", "```\nnot the end")], [("tool", "ok")])
    md = render_markdown("R", [sec])
    assert "````text" in md


def test_a_newline_in_data_never_starts_a_markdown_block():
    # A tool name with a newline and a heading, fence or rule inside: the report.md
    # paragraph stays one paragraph (the "# Fake verdict: no leakage").
    from toolaudit.report import Section
    from toolaudit.report._document import render_markdown

    name = "get_x\n# Fake verdict: no leakage\n```\n---"
    text = render_markdown("t", [Section("s", [f"tool {name} is above chance"])])
    lines = text.splitlines()
    assert "# Fake verdict: no leakage" not in lines
    assert "\\# Fake verdict: no leakage" in lines
    assert "```" not in lines and "---" not in lines
    assert md_text("ok #3 and # here") == "ok #3 and # here"  # mid-line: untouched


def test_html_renders_inline_markdown_without_markup_or_links() -> None:
    sec = Section("S")
    sec.text("Run `probe compare` and *read* <b>x</b> [a](javascript:alert(1)) a_b_c")
    page = render_html("T", [sec])
    assert "<code>probe compare</code>" in page and "<em>read</em>" in page
    assert "<b>" not in page and "&lt;b&gt;" in page
    assert "<a href='javascript" not in page and 'href="javascript' not in page
    assert "a_b_c" in page


def test_html_tables_scroll_in_their_box_and_align_text_left() -> None:
    sec = Section("S")
    sec.table(
        "t",
        ["arm", "n", "dG>0", "median [IQR]", "p"],
        [["failed", 50, "47/50", "+1.0 [+0.8, +1.2]", "3.71e-11"]],
    )
    page = render_html("T", [sec])
    # the caption spans the content width (a narrow table squeezed a <caption>)
    assert "<div class='tw'><p class='cap'>t</p><table>" in page and "<caption>" not in page
    assert (
        "<td class='t'>failed</td><td>50</td><td>47/50</td><td>+1.0 [+0.8, +1.2]</td><td>3.71e-11</td>"
        in page
    )


def test_a_transcript_pair_marks_the_changed_value() -> None:
    sec = Section("S")
    clean = '{"payment_method_id": "credit_card_9513926", "status": "delivered"}'
    faulted = '{"payment_method_id": "credit_card_8665903", "status": "delivered"}'
    sec.transcript("site", [("tool t", clean)], [("tool t", faulted)], labels=("clean", "N_m"))
    line = "changed (clean → N_m): credit_card_9513926 → credit_card_8665903"
    assert line in render_markdown("T", [sec])
    page = render_html("T", [sec])
    assert line in page and "<mark>credit_card_8665903</mark>" in page


def test_a_figure_draws_control_characters_visibly_and_logs_glyph_warnings_escaped(
    caplog,
) -> None:
    """A tool name with ESC in a title or label is drawn as ``\\x1b``; category tick
    labels, made while drawing, reach the font, whose "Glyph missing" warning is logged
    with the same escaping instead of raised with the raw byte."""
    import warnings

    from toolaudit.report._document import figure_png, new_figure

    fig, ax = new_figure(figsize=(3, 2))
    ax.barh(["get_\x1b[31mred", "ok"], [1, 2])
    ax.set_title("tool \x1b[31mred\x07")
    with warnings.catch_warnings(), caplog.at_level("WARNING", "toolaudit.report._document"):
        warnings.simplefilter("error")  # nothing reaches Python's warnings
        png = figure_png(fig)
    assert png.startswith(b"\x89PNG")
    assert ax.get_title() == "tool \\x1b[31mred\\x07"
    assert "Glyph 27 (\\x1b) missing" in caplog.text and "\x1b" not in caplog.text

"""A small report document model rendered to Markdown and to one self-contained HTML file.

Everything in a section may come from a trace (tool names, tool returns, ids), so both
renderers treat block text as data, never as markup: Markdown escapes ``|``, HTML
special characters and Markdown's table syntax, HTML escapes everything, and control
characters (ESC, NUL, ...) are written as visible escapes such as ``\\x1b`` in both.
"""

from __future__ import annotations

import base64
import html
import io
import logging
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Table:
    """A table: a caption, a header row and rows of cells (numbers are formatted)."""

    caption: str
    header: list[str]
    rows: list[list[Any]]


#: The report's content width in CSS px in a window 1280 px wide (``body``'s
#: max-width): a wider figure is scaled down to it, and its text with it.
CONTENT_PX = 1100
#: The smallest text a figure shows, in CSS px, read in a window 1280 px wide.
MIN_TEXT_PX = 10.0
#: The resolution figures are rendered at.
FIGURE_DPI = 110


@dataclass(frozen=True, slots=True)
class Figure:
    """An embedded PNG (bytes) with a caption; ``text_px`` is the height of its smallest
    text in CSS px as the report shows it in a window 1280 px wide (None: not measured)."""

    caption: str
    png: bytes
    text_px: float | None = None


@dataclass(frozen=True, slots=True)
class Transcript:
    """Two tool-return transcripts side by side (e.g. clean vs faulted), collapsible.

    ``left`` and ``right`` are lists of ``(role, text)`` turns; ``labels`` names the two
    columns. The HTML shows them in a ``<details>`` element (no JavaScript); Markdown
    shows them as two fenced blocks.
    """

    caption: str
    labels: tuple[str, str]
    left: list[tuple[str, str]]
    right: list[tuple[str, str]]


@dataclass(frozen=True, slots=True)
class Headline:
    """One verdict line of a report's first screen, linking to the section titled
    ``target`` (no link when no section has that title). As a card it also carries a
    ``severity`` (``problem``, ``clear``, ``insufficient`` or ``info``), a plain-words
    ``sentence`` and the verdict keyword as a small ``tag``."""

    text: str
    target: str | None = None
    severity: str | None = None
    sentence: str | None = None
    tag: str | None = None


@dataclass(slots=True)
class Section:
    """One audit's part of the report: text, tables and figures in order."""

    title: str
    blocks: list[str | Table | Figure | Transcript | Headline] = field(default_factory=list)

    def text(self, paragraph: str) -> Section:
        """Append a paragraph."""
        self.blocks.append(paragraph)
        return self

    def headline(
        self,
        text: str,
        *,
        target: str | None = None,
        severity: str | None = None,
        sentence: str | None = None,
        tag: str | None = None,
    ) -> Section:
        """Append a verdict line linking to the section titled ``target`` (a card when
        ``severity`` and ``sentence`` are given)."""
        self.blocks.append(Headline(text, target, severity, sentence, tag))
        return self

    def table(self, caption: str, header: list[str], rows: list[list[Any]]) -> Section:
        """Append a table."""
        self.blocks.append(Table(caption, header, rows))
        return self

    def figure(self, caption: str, fig: Any) -> Section:
        """Append a matplotlib figure (rendered to PNG, its text at least
        :data:`MIN_TEXT_PX` as shown)."""
        png, text_px = render_figure(fig)
        self.blocks.append(Figure(caption, png, text_px))
        return self

    def transcript(
        self,
        caption: str,
        left: list[tuple[str, str]],
        right: list[tuple[str, str]],
        *,
        labels: tuple[str, str] = ("clean", "faulted"),
    ) -> Section:
        """Append a side-by-side view of two transcripts (``(role, text)`` turns)."""
        self.blocks.append(Transcript(caption, labels, list(left), list(right)))
        return self


#: The words a card shows for each severity (see ``toolaudit.report._cards``).
SEVERITY_WORDS: dict[str, str] = {
    "problem": "problem found",
    "clear": "nothing found",
    "insufficient": "not enough data",
    "info": "for information",
}


def visible(text: str, *, keep: str = "") -> str:
    """``text`` with control characters written as visible escapes (``\\x1b``,
    ``\\n``, ``\\x00``...: Python's ``unicode_escape`` spelling); characters in ``keep``
    (e.g. ``"\\n"``) are left as they are.

    Example:
        >>> visible("red\\x1b[31m\\n")
        'red\\\\x1b[31m\\\\n'
    """
    return "".join(
        c
        if c.isprintable() or c == " " or c in keep
        else c.encode("unicode_escape").decode("ascii")
        for c in text
    )


def md_text(text: str, *, cell: bool = False) -> str:
    """Text made safe for Markdown: HTML special characters as entities, ``|`` and
    link syntax escaped,
    control characters visible; in a table ``cell`` a newline is shown as ``\\n`` so the
    row stays one line."""
    text = visible(text, keep="" if cell else "\n\t")
    text = html.escape(text, quote=False)
    # "|" would split a table row; "](" would make a trace's text a hidden link.
    text = text.replace("|", "\\|").replace("](", "\\](")
    if not cell:  # a line of a paragraph never starts a heading, quote, fence or rule
        text = _BLOCK_START.sub(lambda m: m.group(1) + m.group(2) + "\\", text)
    return text


# At a line's start (after optional indentation), what Markdown would read as a block of
# its own: an ATX heading, a code fence, a setext underline or a thematic break (a ">"
# is already "&gt;", which block parsing does not read as a quote).
_BLOCK_START = re.compile(r"(^)([ \t]*)(?=#|```|~~~|---|===|\*\*\*)", re.M)


def new_figure(
    *, figsize: tuple[float, float], nrows: int = 1, ncols: int = 1, **subplots: Any
) -> tuple[Any, Any]:
    """A matplotlib ``Figure`` and its axes through the object-oriented API only: no
    pyplot state and no global backend switch, so a notebook user's backend is untouched.

    Example:
        >>> fig, ax = new_figure(figsize=(2.0, 1.0))
        >>> len(figure_png(fig)) > 100
        True
    """
    from matplotlib.figure import Figure

    fig = Figure(figsize=figsize)
    return fig, fig.subplots(nrows, ncols, **subplots)


def figure_png(fig: Any) -> bytes:
    """Render a matplotlib figure to PNG bytes (fixed metadata, so output is stable), its
    smallest text raised to :data:`MIN_TEXT_PX` as the report shows it (see
    :func:`render_figure`)."""
    return render_figure(fig)[0]


def render_figure(fig: Any) -> tuple[bytes, float]:
    """The figure as PNG bytes, and the height in CSS px of its smallest text as the
    report shows it in a window 1280 px wide (a PNG wider than :data:`CONTENT_PX` is
    scaled down to it).

    Text smaller than :data:`MIN_TEXT_PX` there is enlarged and the figure drawn again
    (a wide figure shrinks as shown, so its text must start larger). Control characters
    in its titles and labels (a tool name from a trace: ESC, BEL, CR) are drawn as
    visible escapes, as in every other output. Tick labels made while drawing
    (categories) can still reach the font, which has no glyph for them: its warnings
    are logged with the same escaping instead of carrying the raw bytes."""
    from matplotlib.text import Text

    for artist in fig.findobj(Text):
        text = artist.get_text()
        if not all(c.isprintable() or c in " \n" for c in text):
            artist.set_text(visible(text, keep="\n"))
    png = _png(fig)
    for _ in range(3):  # enlarging text widens a tight figure: settle in a few passes
        scale = min(1.0, CONTENT_PX / _png_width(png))
        need = MIN_TEXT_PX * 72.0 / (FIGURE_DPI * scale)  # points
        texts = _shown_texts(fig)
        smallest = min((t.get_fontsize() for t in texts), default=need)
        if smallest >= need - 1e-6:
            return png, smallest * FIGURE_DPI / 72.0 * scale
        _enlarge(fig, texts, need)
        png = _png(fig)
    scale = min(1.0, CONTENT_PX / _png_width(png))
    smallest = min((t.get_fontsize() for t in _shown_texts(fig)), default=need)
    return png, smallest * FIGURE_DPI / 72.0 * scale


def _png(fig: Any) -> bytes:
    import warnings

    buf = io.BytesIO()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fig.savefig(buf, format="png", dpi=FIGURE_DPI, bbox_inches="tight",
                    metadata={"Software": None})  # fmt: skip
    for w in caught:
        logger.warning("figure: %s", visible(str(w.message)))
    return buf.getvalue()


def _png_width(png: bytes) -> int:
    """The pixel width in a PNG's IHDR chunk."""
    return int.from_bytes(png[16:20], "big")


def _shown_texts(fig: Any) -> list[Any]:
    from matplotlib.text import Text

    return [t for t in fig.findobj(Text) if t.get_visible() and t.get_text().strip()]


def _enlarge(fig: Any, texts: list[Any], need: float) -> None:
    """Every text below ``need`` points raised to it; tick labels through their axes'
    tick parameters, so ticks made at the next draw keep the size."""
    for ax in fig.axes:
        for axis, name in ((ax.xaxis, "x"), (ax.yaxis, "y")):
            labels = [t for t in axis.get_ticklabels() if t.get_text().strip()]
            if labels and min(t.get_fontsize() for t in labels) < need:
                ax.tick_params(axis=name, which="both", labelsize=need)
    for t in texts:
        if t.get_fontsize() < need:
            t.set_fontsize(need)


def text_colour(rgba: tuple[float, ...]) -> str:
    """``"black"`` or ``"white"``: whichever contrasts more with a fill of colour
    ``rgba`` (WCAG relative luminance), for a number written on a heatmap cell.

    Example:
        >>> text_colour((0.02, 0.19, 0.38, 1.0)), text_colour((0.97, 0.97, 0.97, 1.0))
        ('white', 'black')
    """
    lum = relative_luminance(rgba)
    return "black" if (lum + 0.05) / 0.05 >= 1.05 / (lum + 0.05) else "white"


def relative_luminance(rgba: tuple[float, ...]) -> float:
    """The WCAG relative luminance of an sRGB colour (channels in 0..1)."""

    def lin(c: float) -> float:
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = (lin(float(c)) for c in rgba[:3])
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def fmt(value: Any) -> str:
    """Format one table cell.

    Example:
        >>> fmt(0.5), fmt([0.1, 0.25]), fmt([None, float("nan")]), fmt(None)
        ('0.500', '[0.100, 0.250]', 'not estimable', '—')
    """
    if value is None:
        return "—"
    if isinstance(value, float):
        if math.isnan(value):
            return "undefined"
        return f"{value:.3f}"
    if (
        isinstance(value, list | tuple)
        and len(value) == 2
        and all(isinstance(v, float | int) or v is None for v in value)
    ):
        if all(v is None or (isinstance(v, float) and math.isnan(v)) for v in value):
            return "not estimable"  # an interval without bounds (e.g. from one pair)
        return f"[{fmt(value[0])}, {fmt(value[1])}]"
    return str(value)


def render_markdown(title: str, sections: list[Section]) -> str:
    """The report as Markdown (figures are referred to by caption only)."""
    out = [f"# {title}", ""]
    anchors = _anchors(sections)
    for i, sec in enumerate(sections):
        out += [f'<a id="s{i}"></a>', "", f"## {sec.title}", ""]
        for block in sec.blocks:
            if isinstance(block, str):
                out += [md_text(block), ""]
            elif isinstance(block, Headline):
                text = md_text(block.text, cell=True)
                anchor = anchors.get(block.target) if block.target else None
                line = f"[{text}](#{anchor})" if anchor else text
                if block.severity:
                    line = f"**{SEVERITY_WORDS.get(block.severity, block.severity)}** · {line}"
                out.append(f"- {line}")
                if block.sentence:
                    tag = f" `{md_text(block.tag, cell=True)}`" if block.tag else ""
                    out.append(f"  {md_text(block.sentence, cell=True)}{tag}")
                out.append("")
            elif isinstance(block, Table):
                out += [f"**{md_text(block.caption, cell=True)}**", ""]
                out.append("| " + " | ".join(md_text(h, cell=True) for h in block.header) + " |")
                out.append("|" + "---|" * len(block.header))
                for row in block.rows:
                    out.append("| " + " | ".join(md_text(fmt(c), cell=True) for c in row) + " |")
                out.append("")
            elif isinstance(block, Transcript):
                out += _transcript_markdown(block)
            else:
                out += [f"*Figure: {md_text(block.caption, cell=True)}* (see report.html)", ""]
    return "\n".join(out)


def _anchors(sections: list[Section]) -> dict[str, str]:
    """Section title -> anchor id (``s<index>`` of the first section with that title)."""
    out: dict[str, str] = {}
    for i, sec in enumerate(sections):
        out.setdefault(sec.title, f"s{i}")
    return out


def _fence(text: str) -> str:
    """A backtick fence longer than any run of backticks inside ``text``."""
    longest = current = 0
    for c in text:
        current = current + 1 if c == "`" else 0
        longest = max(longest, current)
    return "`" * max(3, longest + 1)


def _turns_text(turns: list[tuple[str, str]]) -> str:
    return "\n".join(f"[{visible(role)}] {visible(text, keep=chr(10))}" for role, text in turns)


def _transcript_markdown(block: Transcript) -> list[str]:
    out = [f"**{md_text(block.caption, cell=True)}**", ""]
    line = _changed_line(_turns_text(block.left), _turns_text(block.right), block.labels)
    if line:
        out += [md_text(line, cell=True), ""]
    for label, turns in zip(block.labels, (block.left, block.right), strict=True):
        body = _turns_text(turns)
        fence = _fence(body)
        out += [f"*{md_text(label, cell=True)}*", "", fence + "text", body, fence, ""]
    return out


_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,sans-serif;max-width:1100px;margin:2em auto;
padding:0 1em;color:#1d2433;line-height:1.45}
h1{border-bottom:2px solid #2b5797}h2{margin-top:2em;color:#2b5797}
.tw{overflow-x:auto;max-width:100%;margin:.5em 0 1.5em;background:
linear-gradient(to right,#fff 30%,#fff0),linear-gradient(to left,#fff 30%,#fff0) 100% 0,
radial-gradient(farthest-side at 0 50%,#0003,#0000),
radial-gradient(farthest-side at 100% 50%,#0003,#0000) 100% 0;background-repeat:no-repeat;
background-size:40px 100%,40px 100%,14px 100%,14px 100%;
background-attachment:local,local,scroll,scroll}
table{border-collapse:collapse;font-size:.9em}
th,td{border:1px solid #ccd;padding:.3em .6em;text-align:right}
th{background:#eef2fa;text-align:left}td.t{text-align:left;overflow-wrap:break-word}
td.l{overflow-wrap:anywhere;min-width:10em}
code{background:#eef2fa;padding:0 .2em;border-radius:3px;font-size:.92em}
.cap{text-align:left;font-weight:600;margin:.3em 0;position:sticky;left:0}
figure{margin:1em 0}figcaption{font-size:.9em;color:#555}img{max-width:100%;height:auto}
nav a{margin-right:1em}
.verdict{margin:.25em 0;padding:.35em .6em;border-left:4px solid #2b5797;background:#f3f6fc}
.verdict a{color:#1d2433;text-decoration:none}.verdict a:hover{text-decoration:underline}
.tx{display:grid;grid-template-columns:1fr 1fr;gap:1em}
.tx pre{white-space:pre-wrap;word-break:break-word;background:#f6f8fb;padding:.5em;
font-size:.8em;margin:0}
.tx h4{margin:.3em 0}
mark{background:#ffe08a}.chg{font-size:.9em;margin:.3em 0}
.card{margin:.5em 0;padding:.45em .7em;border-left:6px solid #889;background:#f6f7f9}
.card .verdict{border:0;background:none;padding:0;font-size:.85em;color:#445}
.card .plain{margin:.2em 0}.sev{font-weight:700;font-size:.8em;text-transform:uppercase}
.tag{font-size:.75em;color:#556}
.sev-problem{border-color:#c0392b;background:#fdf1f0}.sev-problem .sev{color:#c0392b}
.sev-clear{border-color:#2e8b57;background:#f0f8f3}.sev-clear .sev{color:#2e8b57}
.sev-insufficient{border-color:#d4a017;background:#fdf8ea}.sev-insufficient .sev{color:#9a7400}
"""


def render_html(title: str, sections: list[Section]) -> str:
    """The report as one self-contained HTML page (plots embedded as base64 PNG)."""

    def esc(text: str) -> str:
        return html.escape(visible(text))

    parts = [
        "<!DOCTYPE html>",
        f"<html><head><meta charset='utf-8'><title>{esc(title)}</title>",
        f"<style>{_CSS}</style></head><body>",
        f"<h1>{esc(title)}</h1>",
        "<nav>"
        + "".join(f"<a href='#s{i}'>{esc(s.title)}</a>" for i, s in enumerate(sections))
        + "</nav>",
    ]
    anchors = _anchors(sections)
    for i, sec in enumerate(sections):
        parts.append(f"<h2 id='s{i}'>{esc(sec.title)}</h2>")
        for block in sec.blocks:
            if isinstance(block, str):
                parts.append(f"<p>{_inline_html(visible(block))}</p>")
            elif isinstance(block, Headline):
                anchor = anchors.get(block.target) if block.target else None
                inner = f"<a href='#{anchor}'>{esc(block.text)}</a>" if anchor else esc(block.text)
                if not block.severity:
                    parts.append(f"<p class='verdict'>{inner}</p>")
                    continue
                sev = html.escape(block.severity)
                words = esc(SEVERITY_WORDS.get(block.severity, block.severity))
                tag = f" <code class='tag'>{esc(block.tag)}</code>" if block.tag else ""
                plain = f"<p class='plain'>{esc(block.sentence)}{tag}</p>" if block.sentence else ""
                parts.append(
                    f"<div class='card sev-{sev}'><span class='sev'>{words}</span>{plain}"
                    f"<p class='verdict'>{inner}</p></div>"
                )
            elif isinstance(block, Transcript):
                parts.append(_transcript_html(block))
            elif isinstance(block, Table):
                # the caption spans the content width, not the table's (a narrow table
                # squeezed it); a wide table scrolls in its own box, shadowed at the edge
                parts.append(f"<div class='tw'><p class='cap'>{esc(block.caption)}</p><table><tr>")
                parts.append("".join(f"<th>{esc(h)}</th>" for h in block.header) + "</tr>")
                for row in block.rows:
                    parts.append("<tr>" + "".join(_cell_html(c) for c in row) + "</tr>")
                parts.append("</table></div>")
            else:
                data = base64.b64encode(block.png).decode("ascii")
                parts.append(
                    f"<figure><img alt='{esc(block.caption)}' src='data:image/png;base64,{data}'>"
                    f"<figcaption>{esc(block.caption)}</figcaption></figure>"
                )
    parts.append("</body></html>")
    return "\n".join(parts)


_EXPONENT = re.compile(r"(?<=\d)[eE][-+]?(?=\d)")
_WORDS_OF_NUMBERS = ("undefined", "not estimable", "—")


_CODE_SPAN = re.compile(r"`([^`\n]+)`")
#: Text cells longer than this may wrap inside a word (class ``l``).
_LONG_CELL = 40


def _cell_html(value: Any) -> str:
    """A table cell: numbers (and intervals, counts such as 47/50) right-aligned, text
    left-aligned (class ``t``). A backtick span in text is shown as code, as in a
    paragraph; nothing else in a cell is read as Markdown (cells hold trace text)."""
    text = fmt(value)
    bare = _EXPONENT.sub("", text)
    numeric = text in _WORDS_OF_NUMBERS or not any(c.isalpha() for c in bare)
    # a long text (a tool return's context, a list of tools) may break anywhere, so a
    # table of them fits the page; a short one (a name, a keyword) stays whole
    cls = "" if numeric else " class='t l'" if len(text) > _LONG_CELL else " class='t'"
    shown = visible(text)
    pieces = _CODE_SPAN.split(shown)  # odd indices: the code spans' contents
    body = "".join(
        f"<code>{html.escape(p)}</code>" if i % 2 else html.escape(p) for i, p in enumerate(pieces)
    )
    return f"<td{cls}>{body}</td>"


def _inline_html(text: str) -> str:
    """Inline Markdown of a paragraph (code spans, emphasis) as HTML: markdown-it-py
    with raw HTML, links, images and autolinks off, so text from a trace can neither
    inject markup nor make a link."""
    from markdown_it import MarkdownIt

    md = MarkdownIt("commonmark", {"html": False}).disable(
        ["link", "image", "autolink", "html_inline", "entity"]
    )
    return str(md.renderInline(text))


_WORD = re.compile(r"[\w#.\-]+|\s+|.", re.S)


def changed_spans(a: str, b: str) -> list[tuple[int, int, int, int]]:
    """The differing spans of two texts as ``(a_start, a_end, b_start, b_end)`` character
    offsets, compared word by word (so ``credit_card_95`` -> ``credit_card_86`` is one
    span, and a redacted prompt shows every replacement)."""
    from difflib import SequenceMatcher

    wa, wb = _WORD.findall(a), _WORD.findall(b)
    pa, pb = [0], [0]
    for w in wa:
        pa.append(pa[-1] + len(w))
    for w in wb:
        pb.append(pb[-1] + len(w))
    ops = SequenceMatcher(None, wa, wb, autojunk=False).get_opcodes()
    spans: list[tuple[int, int, int, int]] = []
    for tag, i1, i2, j1, j2 in ops:
        if tag == "equal":
            continue
        a0, a1, b0, b1 = pa[i1], pa[i2], pb[j1], pb[j2]
        # one span across a short common gap (": ", a quote), so a mark is not choppy
        if spans and a0 - spans[-1][1] <= 2 and b0 - spans[-1][3] <= 2:
            a0, b0 = spans[-1][0], spans[-1][2]
            spans.pop()
        spans.append((a0, a1, b0, b1))
    return spans


def _changed_line(left: str, right: str, labels: tuple[str, str]) -> str | None:
    """``changed (A → B): OLD → NEW`` for the first short difference, with the number of
    further ones; ``None`` when there is none or the texts differ wholesale."""
    spans = changed_spans(left, right)
    if not spans:
        return None
    a0, a1, b0, b1 = spans[0]
    if max(a1 - a0, b1 - b0) > 160:
        return None
    old, new = left[a0:a1].strip(), right[b0:b1].strip()
    more = f" (and {len(spans) - 1} more)" if len(spans) > 1 else ""
    return f"changed ({labels[0]} → {labels[1]}): {old or '(nothing)'} → {new or '(nothing)'}{more}"


def _marked(text: str, spans: list[tuple[int, int]]) -> str:
    out, pos = [], 0
    for start, end in spans:
        out.append(html.escape(text[pos:start]))
        if end > start:
            out.append(f"<mark>{html.escape(text[start:end])}</mark>")
        pos = end
    out.append(html.escape(text[pos:]))
    return "".join(out)


def _transcript_html(block: Transcript) -> str:
    left, right = _turns_text(block.left), _turns_text(block.right)
    spans = changed_spans(left, right)
    cols = []
    for label, text, marks in (
        (block.labels[0], left, [(a0, a1) for a0, a1, _, _ in spans]),
        (block.labels[1], right, [(b0, b1) for _, _, b0, b1 in spans]),
    ):
        cols.append(
            f"<div><h4>{html.escape(visible(label))}</h4><pre>{_marked(text, marks)}</pre></div>"
        )
    line = _changed_line(left, right, block.labels)
    changed = f"<p class='chg'>{html.escape(line)}</p>" if line else ""
    return (
        f"<details><summary>{html.escape(visible(block.caption))}</summary>{changed}"
        f"<div class='tx'>{''.join(cols)}</div></details>"
    )


def write_report(out_dir: str | Path, title: str, sections: list[Section]) -> Path:
    """Write ``report.md`` and ``report.html`` into ``out_dir``; returns the HTML path."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    (out / "report.md").write_text(render_markdown(title, sections), encoding="utf-8")
    path = out / "report.html"
    path.write_text(render_html(title, sections), encoding="utf-8")
    return path

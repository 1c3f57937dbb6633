"""A small report document model rendered to Markdown and to one self-contained HTML file."""

from __future__ import annotations

import base64
import html
import io
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass(frozen=True, slots=True)
class Table:
    """A table: a caption, a header row and rows of cells (numbers are formatted)."""

    caption: str
    header: list[str]
    rows: list[list[Any]]


@dataclass(frozen=True, slots=True)
class Figure:
    """An embedded PNG (bytes) with a caption."""

    caption: str
    png: bytes


@dataclass(slots=True)
class Section:
    """One audit's part of the report: text, tables and figures in order."""

    title: str
    blocks: list[str | Table | Figure] = field(default_factory=list)

    def text(self, paragraph: str) -> Section:
        """Append a paragraph."""
        self.blocks.append(paragraph)
        return self

    def table(self, caption: str, header: list[str], rows: list[list[Any]]) -> Section:
        """Append a table."""
        self.blocks.append(Table(caption, header, rows))
        return self

    def figure(self, caption: str, fig: Any) -> Section:
        """Append a matplotlib figure (rendered to PNG and closed)."""
        self.blocks.append(Figure(caption, figure_png(fig)))
        return self


def figure_png(fig: Any) -> bytes:
    """Render a matplotlib figure to PNG bytes (fixed metadata, so output is stable)."""
    import matplotlib.pyplot as plt

    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110, bbox_inches="tight", metadata={"Software": None})
    plt.close(fig)
    return buf.getvalue()


def fmt(value: Any) -> str:
    """Format one table cell."""
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
        return f"[{fmt(value[0])}, {fmt(value[1])}]"
    return str(value)


def render_markdown(title: str, sections: list[Section]) -> str:
    """The report as Markdown (figures are referred to by caption only)."""
    out = [f"# {title}", ""]
    for sec in sections:
        out += [f"## {sec.title}", ""]
        for block in sec.blocks:
            if isinstance(block, str):
                out += [block, ""]
            elif isinstance(block, Table):
                out += [f"**{block.caption}**", ""]
                out.append("| " + " | ".join(block.header) + " |")
                out.append("|" + "---|" * len(block.header))
                for row in block.rows:
                    out.append("| " + " | ".join(fmt(c) for c in row) + " |")
                out.append("")
            else:
                out += [f"*Figure: {block.caption}* (see report.html)", ""]
    return "\n".join(out)


_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,sans-serif;max-width:1100px;margin:2em auto;
padding:0 1em;color:#1d2433;line-height:1.45}
h1{border-bottom:2px solid #2b5797}h2{margin-top:2em;color:#2b5797}
table{border-collapse:collapse;margin:.5em 0 1.5em;font-size:.9em}
th,td{border:1px solid #ccd;padding:.3em .6em;text-align:right}
th{background:#eef2fa}td:first-child,th:first-child{text-align:left}
caption{caption-side:top;text-align:left;font-weight:600;padding:.3em 0}
figure{margin:1em 0}figcaption{font-size:.9em;color:#555}img{max-width:100%}
nav a{margin-right:1em}
"""


def render_html(title: str, sections: list[Section]) -> str:
    """The report as one self-contained HTML page (plots embedded as base64 PNG)."""
    esc = html.escape
    parts = [
        "<!DOCTYPE html>",
        f"<html><head><meta charset='utf-8'><title>{esc(title)}</title>",
        f"<style>{_CSS}</style></head><body>",
        f"<h1>{esc(title)}</h1>",
        "<nav>"
        + "".join(f"<a href='#s{i}'>{esc(s.title)}</a>" for i, s in enumerate(sections))
        + "</nav>",
    ]
    for i, sec in enumerate(sections):
        parts.append(f"<h2 id='s{i}'>{esc(sec.title)}</h2>")
        for block in sec.blocks:
            if isinstance(block, str):
                parts.append(f"<p>{esc(block)}</p>")
            elif isinstance(block, Table):
                parts.append(f"<table><caption>{esc(block.caption)}</caption><tr>")
                parts.append("".join(f"<th>{esc(h)}</th>" for h in block.header) + "</tr>")
                for row in block.rows:
                    parts.append("<tr>" + "".join(f"<td>{esc(fmt(c))}</td>" for c in row) + "</tr>")
                parts.append("</table>")
            else:
                data = base64.b64encode(block.png).decode("ascii")
                parts.append(
                    f"<figure><img alt='{esc(block.caption)}' src='data:image/png;base64,{data}'>"
                    f"<figcaption>{esc(block.caption)}</figcaption></figure>"
                )
    parts.append("</body></html>")
    return "\n".join(parts)


def write_report(out_dir: str | Path, title: str, sections: list[Section]) -> Path:
    """Write ``report.md`` and ``report.html`` into ``out_dir``; returns the HTML path."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    (out / "report.md").write_text(render_markdown(title, sections), encoding="utf-8")
    path = out / "report.html"
    path.write_text(render_html(title, sections), encoding="utf-8")
    return path

"""One figure per finding (issue 44): the leakage headline's number and interval, as the
first-screen line, the card, the table row it cites and the section's verdict sentence
state it. Used on the demo's leakage result and on a real tau2 run."""

from __future__ import annotations

import re
from typing import Any

from toolaudit.leakage._contract import verdict_finding
from toolaudit.leakage._wording import first_screen_label
from toolaudit.report import headline_sentence, verdict_card

_FIRST_FIGURE = re.compile(r"AUROC (\d\.\d{3}), family-wise 95% CI (\[\d\.\d{3}, \d\.\d{3}\])")


def md_tables(md: str) -> dict[str, list[list[str]]]:
    """Markdown tables by caption: the header row first, then the rows (cells stripped)."""
    out: dict[str, list[list[str]]] = {}
    lines = md.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("**") and line.endswith("**") and i + 2 < len(lines):
            if not lines[i + 2].startswith("| "):
                continue
            rows = []
            for row in lines[i + 2 :]:
                if not row.startswith("|"):
                    break
                if not row.startswith("|---"):
                    rows.append([c.strip() for c in row.strip("|").split(" | ")])
            out[line.strip("*")] = rows
    return out


def _table(tables: dict[str, list[list[str]]], prefix: str) -> list[list[str]]:
    (rows,) = [rows for caption, rows in tables.items() if caption.startswith(prefix)]
    return rows


def headline_mismatches(verdict: dict[str, Any], md: str, *, title: str = "Leakage") -> list[str]:
    """Where the leakage headline figure (``verdict``: leakage.json's block) is not stated
    identically: the first-screen line, the card's sentence, the cited table row of the
    report (``md``) and the first figure of its verdict sentence."""
    f = verdict_finding(verdict)
    reading, _ = first_screen_label(verdict)
    assert reading is not None and f.value is not None and f.interval is not None
    value = f"{f.value:.3f}"
    lo, hi = f.interval
    iv = f"[{lo:.3f}, {hi:.3f}]"
    metric = f.details["metric"]
    problems = []
    line = headline_sentence(title, f)
    if f"{metric} {value} {iv} (family-wise 95% interval)" not in line:
        problems.append(f"line: {line!r}")
    card = verdict_card(title, f).sentence
    if f"{metric} {value} (family-wise 95% interval {lo:.3f} to {hi:.3f})" not in card:
        problems.append(f"card: {card!r}")
    paragraph = next(p for p in md.splitlines() if p.startswith("Verdict: "))
    first = _FIRST_FIGURE.search(paragraph)
    if first is None or first.groups() != (value, iv) or f"{metric} {value}" not in paragraph:
        problems.append(f"verdict sentence: {paragraph!r}")
    tables = md_tables(md)
    if reading.kind == "scope":
        header, *rows = _table(tables, "AUROC by scope and feature set")
        cell = [r[header.index(reading.features)] for r in rows if r[0] == reading.scope]
        want = [f"{value} {iv}"]
    elif reading.kind == "prefix":
        header, *rows = _table(tables, "Prefix lookup for")
        chars = reading.features.removeprefix("prefix ")
        col = header.index("family-wise 95% CI (verdict rule)")
        cell = [f"{r[1]} {r[col]}" for r in rows if r[0] == chars]
        want = [f"{value} {iv}"]
    else:
        header, *rows = _table(tables, "Presence control:")
        cell = [f"{r[1]} {r[2]}" for r in rows]
        want = [f"{value} {iv}"]
    if cell != want:
        problems.append(f"table row: {cell!r}, not {want!r}")
    return problems

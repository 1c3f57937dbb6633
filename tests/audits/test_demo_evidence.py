"""The demo report puts the evidence one click from each finding (issue 26): a redacted
prompt before and after, a mutated run beside its original, the LLM agent's repeat
beside its first run, and the faulted tool return with the changed value marked. Each is
a side-by-side block whose differing text is in ``<mark>``. The full demo's report is
also laid out in headless Chromium (slow)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.report.browser import layout
from toolaudit.cli.main import main


def _sections(html: str) -> dict[str, str]:
    """The report's ``<h2>`` sections by title."""
    heads = [(m.start(), re.sub(r"<[^>]+>", "", m.group(1)))
             for m in re.finditer(r"<h2[^>]*>(.*?)</h2>", html)]  # fmt: skip
    ends = [s for s, _ in heads[1:]] + [len(html)]
    return {title: html[start:end] for (start, title), end in zip(heads, ends, strict=True)}


def _marked(section: str) -> list[str]:
    return re.findall(r"<mark>(.*?)</mark>", section, flags=re.S)


def _evidence(out: Path) -> dict[str, list[str]]:
    html = (out / "report.html").read_text(encoding="utf-8")
    return {title: _marked(body) for title, body in _sections(html).items()}


def test_demo_report_shows_redacted_prompts_and_transcript_pairs(tmp_path: Path) -> None:
    assert main(["-q", "demo", "--out", str(tmp_path), "--only", "redaction", "probe"]) == 0
    marks = _evidence(tmp_path)
    redaction = marks["Redaction audit (controlled benchmark)"]
    # the placeholder put where a pdb_id was: the after side of the before/after block
    assert any("PDB_ID" in m.upper() for m in redaction), redaction[:5]
    study = marks["Probe audit: controlled ResearchOps study"]
    assert len(study) >= 2  # at least one changed span on each side of a pair


@pytest.mark.slow
def test_full_demo_report_has_evidence_beside_every_model_facing_finding(
    tmp_path: Path, shared_data: Path
) -> None:
    argv = ["-q", "demo", "--out", str(tmp_path), "--data-root", str(shared_data)]
    assert main(argv) == 0
    marks = _evidence(tmp_path)
    for title in (
        "Redaction audit (controlled benchmark)",
        "Probe audit: controlled ResearchOps study",
        "Probe audit: an LLM agent and its repeat control",
        "Faults: fault injection into tool returns",
    ):
        assert marks.get(title), f"{title}: no marked evidence in the report"
    # the whole report, opened as a person would: no part runs off a 1280 px page, and
    # every figure decodes
    page = layout(tmp_path / "report.html", tmp_path)
    assert page.scroll_width == page.client_width, f"page overflows: {page}"
    assert page.images > 0 and page.broken_images == 0, page

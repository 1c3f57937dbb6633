"""The faults section of the report."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from toolaudit.report import Finding


def report_section(
    payload: dict[str, Any], *, title: str = "Faults: fault injection into tool returns"
) -> Any:
    """The report section of a ``faults.json`` payload: fallbacks, the conclusions
    (rendered from its findings), Table I and Figures 1-2."""
    from toolaudit.faults._findings import sentence
    from toolaudit.faults._summary import figures, table_rows
    from toolaudit.report import Section

    sec = Section(title)
    for raw in payload.get("findings") or []:
        sec.text(sentence(Finding.model_validate(raw)))
    if evidence := tasks_line(payload):
        sec.text(evidence)
    from toolaudit.faults._seed import (
        SEED_MODEL,
        along_comparison,
        group_comparison,
        site_comparison,
    )

    summary = payload["summary"]
    header, rows = table_rows(summary)
    sec.table("Table I: paired movement against the clean arm, per arm and step k.", header, rows)
    model = payload["meta"]["config"].get("model")
    for caption, (h, r) in (
        ("Table I at the site", site_comparison(summary)),
        ("Table I along the trajectory", along_comparison(summary)),
        ("Where G moves inside the inconsistent family", group_comparison(summary)),
    ):
        sec.table(f"{caption}: this run ({model}) | the seed ({SEED_MODEL}).", h, r)
    if payload["rows"]:
        shown = figures(payload["rows"], payload["summary"])
        for caption, fig in shown:
            sec.figure(caption, fig)
        if len(shown) == 1:
            sec.text(
                "Figure 2 (the readings along the trajectory) is not drawn: this run has "
                "readings at k = 0 only, the site itself."
            )
    for site in payload.get("site_returns") or []:
        returns: dict[str, str] = site["returns"]
        clean = returns.get("clean")
        if clean is None:
            continue
        label = f"tool {site['tool']}"
        for arm, text in returns.items():
            if arm != "clean":
                sec.transcript(
                    f"Task {site['task']}: the site return, clean against {arm}.",
                    [(label, clean)],
                    [(label, text)],
                    labels=("clean", arm),
                )
    return sec


def tasks_line(payload: dict[str, Any]) -> str | None:
    """The task ids the findings rest on, and the command that opens the recorded runs
    when the trajectories came from a results file (``--source``); None without rows."""
    from toolaudit.traces import view_commands

    tasks = list(dict.fromkeys(str(r["task"]) for r in payload.get("rows") or []))
    if not tasks:
        return None
    line = f"The findings rest on {len(tasks)} task(s): {', '.join(tasks)}."
    source = (payload.get("meta") or {}).get("config", {}).get("source")
    if isinstance(source, str) and source != "replay" and Path(source).exists():
        views = view_commands([source])
        if views:
            line += " Open the recorded runs with " + " and ".join(f"`{v}`" for v in views) + "."
    return line

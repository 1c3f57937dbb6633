"""The report section of a harness parity (``toolaudit probe parity``), rendered from
its ``parity.json`` document alone."""

from __future__ import annotations

import json
from typing import Any


def parity_section(doc: dict[str, Any]) -> Any:
    """The parity report section."""
    from toolaudit.report import Section

    a, b = doc["a"]["harness"], doc["b"]["harness"]
    sec = Section(f"Harness parity: tau2 {doc['domain']}, A = {a}, B = {b}")
    sec.table(
        "The two studies",
        ["side", "harness", "task", "split", "packages", "records", "tasks", "task definitions"],
        [[k, s["harness"], s["task"], s["split"], json.dumps(s["packages"]), s["records"],
          s["tasks"], s["definitions"]] for k, s in (("A", doc["a"]), ("B", doc["b"]))],
    )  # fmt: skip
    for text in doc["sentences"]:
        sec.text(text)
    sec.table(
        "Gaps side by side (95% task-cluster intervals over the common tasks; B − A paired by task)",
        ["policy", "condition", "tasks", f"gap {a}", "95%", f"gap {b}", "95%", "B − A", "95%",
         "gap transfers", f"rescored {a}", f"rescored {b}", "B − A", "rescored transfers"],
        [[c["policy"], c["condition"], c["n_tasks"], c["gap_a"], c["gap_a_ci95"], c["gap_b"],
          c["gap_b_ci95"], c["gap_diff"], c["gap_diff_ci95"], c["gap_transfer"], c["rescored_a"],
          c["rescored_b"], c["rescored_diff"], c["rescored_transfer"]] for c in doc["cells"]],
    )  # fmt: skip
    rows = []
    for o in doc["originals"]:
        for d in o["differences"]:
            first = d["first_call_difference"]
            rows.append([
                o["policy"], d["task"], d["reward_a"], d["reward_b"], d["cause"],
                "same calls" if first is None else f"#{first['index']}: {first['a']} vs {first['b']}",
                json.dumps((d["a"] or {}).get("components")),
                json.dumps((d["b"] or {}).get("components")),
                (d["b"] or {}).get("unscorable") or (d["a"] or {}).get("unscorable") or "",
            ])  # fmt: skip
    if rows:
        sec.table(
            "Original runs whose score differs between the harnesses",
            [
                "policy",
                "task",
                f"reward {a}",
                f"reward {b}",
                "cause",
                "first differing call",
                f"components {a}",
                f"components {b}",
                "evaluator note",
            ],
            rows,
        )
    if doc["tasks"]["definitions_differ"]:
        fields = doc["tasks"].get("definition_fields") or {}
        sec.table(
            "Tasks whose definitions differ between the two copies of tau2",
            ["task", "fields that differ"],
            [[t, ", ".join(fields.get(t, [])) or "not readable (another package version)"]
             for t in doc["tasks"]["definitions_differ"]],
        )  # fmt: skip
    return sec

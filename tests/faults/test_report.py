"""faults.json from a run folder without the model: counts, findings and the report."""

from __future__ import annotations

import json

from toolaudit.faults import FaultsConfig, analyze, report_section


def _row(task, arm, k, *, s0, s1, lead="get_order_details", pay=True, policy=None):
    pi = dict.fromkeys(["get_order_details", "get_user_details", "reply"], 0.0)
    pi[lead] = 1.0
    return {
        "task": task, "arm": arm, "k": k, "s0": s0, "s1": s1, "g": s1 - s0,
        "s0_first": s0, "s1_first": s1, "entropy": 0.2, "leading_action": lead,
        "reference_action": "get_order_details", "agrees_reference": lead == "get_order_details",
        "p_reread": 0.9, "p_write": 0.0, "p_reply": 0.1, "pi": pi, "p_unrecognised": 0.01,
        "payment_in_prefix": pay, "policy_mediated": policy,
    }  # fmt: skip


def _folder(tmp_path):
    out = tmp_path / "run"
    out.mkdir()
    cfg = FaultsConfig(data_root="/d", arms=("clean", "failed", "falsified_payment"), k_max=0)
    (out / "run_config.json").write_text(json.dumps(cfg.result_options()))
    census = {
        "tasks": 5,
        "qualifying": ["a", "b", "c"],
        "constraints": {"a": "none", "b": "policy", "c": "stated"},
        "dropped": [
            {"task": "d", "reason": "no_site", "detail": "x"},
            {"task": "e", "reason": "replay_error", "detail": "y"},
        ],
        "site_dropouts": {"replay_error": 1, "no_site": 1},
    }
    (out / "census.json").write_text(json.dumps(census))
    lines = []
    for i, t in enumerate(["a", "b"]):
        rows = [
            _row(t, "clean", 0, s0=1.0, s1=0.5),
            _row(t, "failed", 0, s0=4.0, s1=3.9, lead="get_user_details"),
            _row(t, "falsified_payment", 0, s0=1.0, s1=0.6, pay=i == 0),
        ]
        lines.append(json.dumps({"task": t, "status": "ok", "rows": rows, "arms_skipped": {}}))
    (out / "rows.jsonl").write_text("\n".join(lines) + "\n")
    return out


def test_analyze_counts_add_up_and_findings_render(tmp_path):
    payload = analyze(_folder(tmp_path))
    counts = payload["counts"]
    assert counts["qualifying_tasks"] == 3 and counts["tasks_scored"] == 2
    assert counts["qualifying_tasks"] + sum(counts["site_dropouts"].values()) == 5
    names = {f["name"]: f for f in payload["findings"]}
    assert names["faults.paired_set"]["verdict"] == "partial"
    assert names["faults.clean.agreement_k0"]["value"] == 1.0
    assert names["faults.failed.s0_region"]["verdict"] == "separate"
    by = payload["summary"]["falsified_payment_by_prefix"]
    assert by["in_prefix"]["n"] == 1 and by["not_in_prefix"]["n"] == 1
    sec = report_section(payload)
    texts = [b for b in sec.blocks if isinstance(b, str)]
    assert texts[0] == (
        "3 of 5 tasks qualify for the paired set (dropped: no_site: 1, replay_error: 1); "
        "2 scored (partial)."
    )
    tables = [b for b in sec.blocks if type(b).__name__ == "Table"]
    assert len(tables) == 4 and "the seed" in tables[1].caption
    # the seed's site counts sit beside ours: F n is "2 | 53"
    assert tables[1].rows[0][1] == "2 | 53"


def test_report_shows_the_site_return_clean_against_each_arm(tmp_path):
    out = _folder(tmp_path)
    lines = (out / "rows.jsonl").read_text().splitlines()
    first = json.loads(lines[0])
    first["site_tool"] = "get_order_details"
    first["site_returns"] = {"clean": '{"status": "pending"}', "failed": "Error: <order> not found"}
    lines[0] = json.dumps(first)
    (out / "rows.jsonl").write_text("\n".join(lines) + "\n")
    payload = analyze(out)
    assert payload["site_returns"] == [
        {"task": "a", "tool": "get_order_details", "returns": first["site_returns"]}
    ]
    from toolaudit.report._document import render_html

    html = render_html("t", [report_section(payload)])
    assert "<details" in html and "clean against failed" in html
    assert "Error: &lt;order&gt; not found" in html and "<order>" not in html


def test_analyze_keeps_the_runs_recorded_config(tmp_path):
    # faults.json's meta.config survives `faults analyze` when it agrees with run_config.json
    # (--tasks, --device, --workers are not in run_config.json)
    import json

    folder = _folder(tmp_path)
    first = analyze(folder)
    doc = json.loads((folder / "faults.json").read_text(encoding="utf-8"))
    doc["meta"]["config"] = {**first["meta"]["config"], "tasks": 2, "device": "cpu"}
    doc["meta"]["versions"] = {"torch": "2.12.0"}  # the packages the rows were computed under
    (folder / "faults.json").write_text(json.dumps(doc), encoding="utf-8")
    again = analyze(folder)
    assert again["meta"]["config"]["tasks"] == 2 and again["meta"]["config"]["device"] == "cpu"
    assert again["meta"]["versions"] == {"torch": "2.12.0"}
    doc["meta"]["config"]["arms"] = ["clean"]  # another run's record: not trusted
    (folder / "faults.json").write_text(json.dumps(doc), encoding="utf-8")
    other = analyze(folder)
    assert other["meta"]["config"]["tasks"] is None and other["meta"]["versions"] != {
        "torch": "2.12.0"
    }

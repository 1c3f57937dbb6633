"""Report sections of the seed-protocol judge audit (``probe judge-audit``)."""

from __future__ import annotations

from typing import Any

from toolaudit.probes.judges._run import judge_setting
from toolaudit.report import Section, Table, fmt

# The seed's own figures (verifier-brittleness-trace, §4.2, §5, Table 8), shown beside ours.
SEED_FIGURES = (
    "Seed (§4.2, §5, Table 8): 118 fixed tau2 trajectories, 3 calls per view; repeat and "
    "tool_rename 0/118 verdict flips, reformat 1/118; the two judges disagree on 57% of "
    "the same records; agreement with native reward 95% (κ 0.89) for one judge and 38% "
    "(κ 0.09) for the other, whose disagreements all mark benchmark successes, often "
    "objecting to procedure (keyword heuristic)."
)


def _rate(d: dict[str, Any] | None) -> str:
    if not d or d.get("rate") is None:
        return "–"
    ci = d.get("ci95")
    inner = f" [{fmt(ci[0])}, {fmt(ci[1])}]" if ci else ""
    return f"{fmt(d['rate'])}{inner} (n={d['n_pairs']})"


def _judge_table(result: dict[str, Any]) -> Table:
    views = [v for v in result["views"] if v != result["reference_view"]]
    header = ["judge", "calls", "pass", "fail", "insufficient", "unparseable", "with a reason",
              "call-to-call flips [95%]"] + [f"view {v} flips [95%]" for v in views] + [
              "agree native", "κ native", "procedural / FAIL on native pass"]  # fmt: skip
    rows = []
    for j in result["judges"]:
        s = j["verdict_shares"]
        p = j["procedural_objections"]
        rows.append(
            [j["judge"], j["n_calls"], fmt(s["pass"]), fmt(s["fail"]), fmt(s["insufficient"]),
             fmt(s["unparseable"]), fmt(j.get("reason_share")), _rate(j["repeat_flips"])]
            + [_rate(j["view_flips_by_view"].get(v)) for v in views]
            + [fmt(j["native_agreement"]), fmt(j["native_kappa"]),
               f"{p['procedure']}/{p['n_fail_on_native_pass']}"]
        )  # fmt: skip
    return Table(
        f"Per judge (Table-8 style): {result['n_records']} fixed records on "
        f"{result['n_tasks']} tasks, {result['n_repeats']} calls per view; flips are "
        f"against the {result['reference_view']!r} view at the same call index, "
        "call-to-call flips between the calls of one view; intervals resample whole tasks",
        header,
        rows,
    )


def _sentences(result: dict[str, Any]) -> list[str]:
    out = []
    for j in result["judges"]:
        rf = j["repeat_flips"]["rate"]
        vf = j["view_flips"]["rate"]
        p = j["procedural_objections"]
        out.append(
            f"{j['judge']}: verdicts flip at {fmt(vf)} across presentations against "
            f"{fmt(rf)} between identical calls; it agrees with native reward on "
            f"{fmt(j['native_agreement'])} of {j['n_native']} records (κ "
            f"{fmt(j['native_kappa'])}); {p['procedure']} of its "
            f"{p['n_fail_on_native_pass']} FAIL verdicts on native successes object to "
            "procedure by the keyword heuristic."
        )
    for b in result["between"]:
        ci = b["ci95"]
        out.append(
            f"{b['judges'][0]} and {b['judges'][1]} disagree on {fmt(b['disagreement'])}"
            + (f" [{fmt(ci[0])}, {fmt(ci[1])}]" if ci else "")
            + f" of {b['n_pairs']} (record, view) majority verdicts (κ {fmt(b['kappa'])}"
            + _iv(b.get("records_calls_ci95", {}).get("kappa"))
            + "; intervals resampling records and calls: disagreement"
            + (_iv(b.get("records_calls_ci95", {}).get("disagreement")) or " not estimable")
            + ")."
        )
        a_model, b_model = (judge_setting(j, 0.0)[0] for j in b["judges"])
        if a_model == b_model:
            out.append(
                f"Both are settings of one model ({a_model}): their disagreement measures "
                "the setting, not two models (the seed's 57% is between two models)."
            )
    return out


def _iv(pair: list[float] | None) -> str:
    """`` [lo, hi]`` of an interval, or nothing."""
    return f" [{fmt(pair[0])}, {fmt(pair[1])}]" if pair else ""


def _cut(text: str | None, width: int = 240) -> str:
    text = (text or "").replace("\n", " ")
    return text if len(text) <= width else text[: width - 1] + "…"


def judge_audit_sections(result: dict[str, Any]) -> list[Section]:
    """The report of a seed-protocol judge audit: the Table-8-style table beside the
    seed's figures, the between-judge table, every disagreement with both reasons, and
    examples of the procedural-objection heuristic."""
    main = Section("Judge audit (seed protocol)")
    main.blocks += _sentences(result)
    main.blocks.append(_judge_table(result))
    main.blocks.append(SEED_FIGURES)
    main.blocks.append(
        "Native reward is a reference, not ground truth: these are consistency and "
        "agreement measures, not accuracy."
    )
    sections = [main]
    if result["between"]:
        between = Section("Between judges")
        between.blocks.append(Table(
            "Disagreement on the same (record, view) majority verdicts over calls",
            ["judges", "(record, view) pairs", "records", "disagreement [95%]",
             "disagreement [95%, records and calls]", "κ [95%, records and calls]"],
            [[" vs ".join(b["judges"]), b["n_pairs"], b["n_records"],
              _rate({"rate": b["disagreement"], "ci95": b["ci95"], "n_pairs": b["n_pairs"]}),
              fmt(b["disagreement"]) + _iv((b.get("records_calls_ci95") or {}).get("disagreement")),
              fmt(b["kappa"]) + _iv((b.get("records_calls_ci95") or {}).get("kappa"))]
             for b in result["between"]],
        ))  # fmt: skip
        for b in result["between"]:
            a, c = b["judges"]
            between.blocks.append(Table(
                f"Where {a} and {c} disagree ({len(b['disagreements'])} (record, view) pairs)",
                ["record", "task", "view", f"{a}", f"{a} reason", f"{c}", f"{c} reason"],
                [[d["record_id"], d["task_id"], d["view"], d["verdicts"][0],
                  _cut(d["reasons"][0]), d["verdicts"][1], _cut(d["reasons"][1])]
                 for d in b["disagreements"]],
            ))  # fmt: skip
        sections.append(between)
    proc = Section("Procedural objections (keyword heuristic)")
    proc.blocks.append(
        "A FAIL reason on a natively successful record is read as procedural when it names "
        "a step, check or rule (verification, identity, confirmation, consent, policy, "
        "transfer) and no wrong or missing result; this is a keyword heuristic, as the "
        "seed's is. Examples of each class:"
    )
    rows = []
    for j in result["judges"]:
        for kind, items in j["procedural_objections"]["examples"].items():
            rows += [[j["judge"], kind, e["record_id"], e["view"], _cut(e["reason"])]
                     for e in items]  # fmt: skip
    proc.blocks.append(Table("Classified reasons", ["judge", "class", "record", "view",
                                                   "reason"], rows))  # fmt: skip
    sections.append(proc)
    return sections

"""``toolaudit demo``: every registered audit on embedded defaults, one HTML report.

The parts are the audit registry (:data:`toolaudit.audits.AUDITS`), in its order: each
audit's demo configuration is run, its results file written and loaded through its model,
and its report sections rendered with a note per fallback. The overview lists every
part's status and every fallback.
"""

from __future__ import annotations

import argparse
import logging
import os
import resource
import sys
import time
from pathlib import Path
from typing import ClassVar

from toolaudit.audits import (
    AUDITS,
    AuditResult,
    Fallback,
    Finding,
    ResultRecord,
    audit_headline,
    audit_sections,
    load_audit,
    result_meta,
    run_audit,
    write_result,
)
from toolaudit.cli._common import add_data_root, add_parser, default_data_root, progress
from toolaudit.cli._validate import output_dir, seed
from toolaudit.errors import ToolAuditError
from toolaudit.report import (
    CONCLUSION_CHANGING,
    Section,
    fallback_counts,
    verdict_card,
    write_report,
)

logger = logging.getLogger(__name__)


class DemoPart(ResultRecord):
    """One part of the demo: its status, results file and fallbacks."""

    part: str
    status: str
    results_file: str | None = None
    fallbacks: list[Fallback] = []
    headline: Finding | None = None
    seconds: float | None = None
    cpu_seconds: float | None = None
    load_average: float | None = None


def cpu_seconds() -> float:
    """CPU seconds used so far by this process and its finished children (user + system,
    every thread). On a shared machine this estimates an idle run's wall time better than
    the wall clock does: about equal to it for single-threaded work, twice it for work
    that keeps both of 2 cores busy."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


class DemoResult(AuditResult):
    """``demo.json``: the parts run, in order."""

    results_file: ClassVar[str] = "demo.json"

    parts: list[DemoPart]


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``demo`` subcommand."""
    p = add_parser(
        sub,
        "demo",
        help="run every audit on embedded defaults and write DIR/report.html",
        example="toolaudit demo --out demo-out",
        description=(
            "Runs every registered audit on embedded defaults: the public trace summary, "
            "the controlled tcr-shortcut benchmark (leakage, redaction with the controlled "
            "frozen model), the researchops probe study and its paired comparison on tau2 "
            "retail, the scripted agents on real tau2 telecom tasks through Inspect AI, "
            "and fault readings with the embedded Qwen instruct model. Parts that need the public "
            "tau2-bench / tau-bench files read them from --data-root; without them a part "
            "is skipped or uses stand-in data, and says so (a fallback in its results' "
            "meta.fallbacks, a warning, a note in the report and a row in the overview). "
            "Writes each audit's JSON, demo.json, report.md and a self-contained report.html "
            "into --out; prints and records (demo.json) each part's wall and CPU seconds "
            "and the load average."
        ),
    )
    p.add_argument("--out", type=output_dir, required=True, help="output folder")
    p.add_argument("--seed", type=seed, default=0, help="seed for every stochastic step")
    p.add_argument(
        "--only",
        nargs="+",
        choices=list(AUDITS),
        default=None,
        help="run only these parts, in registry order (without the model-facing parts, "
        "probe_llm and faults: --only traces datasets leakage leakage_tau2 redaction probe "
        "probe_compare probe_tau2)",
    )
    add_data_root(p)
    p.set_defaults(func=run)


def _first_screen(parts: list[DemoPart], targets: list[tuple[str, str | None]]) -> Section:
    """One card per part, rendered from its headline finding (or its status when it
    failed): severity, a plain sentence, the numbers and the verdict keyword, linking to
    the part's first section. Fallbacks: their count per audit, and only those that
    change what a conclusion rests on (each is listed in its audit's section)."""
    sec = Section("What the demo found")
    for part, (title, target) in zip(parts, targets, strict=True):
        if part.status != "ok":
            sec.headline(f"{title}: {part.status}", target=target, severity="insufficient",
                         sentence="This part did not run; its section says why.")  # fmt: skip
            continue
        note = None
        if part.headline is None:
            note = f"{part.part}: {len(part.fallbacks)} fallbacks; details in its section"
        card = verdict_card(title, part.headline, note=note)
        sec.headline(card.numbers, target=target, severity=card.severity,
                     sentence=card.sentence, tag=card.tag)  # fmt: skip
    counts = fallback_counts([(p.part, p.fallbacks) for p in parts])
    changing = [(p.part, f) for p in parts for f in p.fallbacks if f.kind in CONCLUSION_CHANGING]
    sec.text(
        f"Fallbacks in force: {counts}, each listed once in its audit's section; "
        f"{len(changing)} change what a conclusion rests on" + (":" if changing else ".")
    )
    for name, f in changing:
        sec.text(f"{name}: {f.sentence()}")
    return sec


def _overview(
    data_root: Path | None, seed: int, parts: list[DemoPart], timings: list[float]
) -> Section:
    n_fallbacks = sum(len(p.fallbacks) for p in parts)
    ok = sum(p.status == "ok" for p in parts)
    overview = Section("Overview").text(
        f"toolaudit demo on embedded defaults: {ok} of {len(parts)} parts ran, with "
        f"{n_fallbacks} fallbacks (each in its part's section and meta.fallbacks). Public "
        "data root: " + (str(data_root) if data_root else "not found") + f". Seed {seed}."
    )
    overview.table(
        "Parts run (CPU seconds: this process and its children, every thread; an idle "
        "machine's wall time lies between them over the cores and them; load: the 1-minute "
        "load average when the part ended)",
        ["part", "status", "results", "fallbacks", "seconds", "CPU seconds", "load"],
        [[p.part, p.status, p.results_file or "—", len(p.fallbacks), f"{t:.1f}",
          f"{p.cpu_seconds:.1f}" if p.cpu_seconds is not None else "—",
          f"{p.load_average:.1f}" if p.load_average is not None else "—"]
         for p, t in zip(parts, timings, strict=True)],
    )  # fmt: skip
    return overview


def run(args: argparse.Namespace) -> int:
    """Run the registered audits in order; a failing part is reported and the rest run."""
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    data_root = args.data_root or default_data_root()
    if data_root is not None and not data_root.is_dir():
        raise ToolAuditError(f"--data-root {data_root}: no such folder")
    wanted = args.only or list(AUDITS)
    sections: list[Section] = []
    parts: list[DemoPart] = []
    timings: list[float] = []
    targets: list[tuple[str, str | None]] = []
    for name in AUDITS:
        if name not in wanted:
            continue
        start, cpu_start = time.perf_counter(), cpu_seconds()
        print(f"[demo] {name} ...", file=sys.stderr, flush=True)
        audit = load_audit(name)
        try:
            config = audit.demo_config(seed=args.seed, data_root=data_root)
            with progress(name) as cb:
                result = run_audit(name, out, config=config, progress=cb)
            path = out / result.results_file
            own = audit_sections(audit, result)
            sections += own
            targets.append((audit.title, own[0].title if own else None))
            part = DemoPart(
                part=name,
                status="ok",
                results_file=str(path.relative_to(out)),
                fallbacks=result.meta.fallbacks,
                headline=audit_headline(audit, result),
            )
        except ToolAuditError as exc:
            part = DemoPart(part=name, status=f"failed: {exc}")
            sections.append(Section(audit.title).text(f"This part failed: {exc}"))
            targets.append((audit.title, audit.title))
        elapsed, cpu = time.perf_counter() - start, cpu_seconds() - cpu_start
        load = os.getloadavg()[0]
        part = part.model_copy(
            update={"seconds": round(elapsed, 1), "cpu_seconds": round(cpu, 1),
                    "load_average": round(load, 1)}
        )  # fmt: skip
        parts.append(part)
        timings.append(elapsed)
        print(
            f"[demo] {name}: {part.status} ({elapsed:.1f} s wall, {cpu:.1f} s CPU, "
            f"load {load:.1f})",
            file=sys.stderr,
            flush=True,
        )
    wall = sum(p.seconds or 0.0 for p in parts)
    cpu = sum(p.cpu_seconds or 0.0 for p in parts)
    print(
        f"[demo] all parts: {wall:.1f} s wall, {cpu:.1f} s CPU (on an idle 2-core machine "
        f"between {cpu / 2:.0f} s, if every part kept both cores busy, and {cpu:.0f} s)",
        file=sys.stderr,
        flush=True,
    )
    meta = result_meta(
        command="demo",
        seed=args.seed,
        config={"data_root": bool(data_root), "only": wanted},
        fallbacks=[f for p in parts for f in p.fallbacks],
    )
    write_result(DemoResult.new(meta, parts=parts), out)
    overview = _overview(data_root, args.seed, parts, timings)
    first = _first_screen(parts, targets)
    path = write_report(out, "toolaudit demo report", [first, overview, *sections])
    print(f"report: {path}", file=sys.stderr)
    return 1 if any(p.status != "ok" for p in parts) else 0

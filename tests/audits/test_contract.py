"""The audit contract: every registered audit implements it, and every results file the
demo writes loads back into its model and writes back to the same bytes."""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass, replace
from html.parser import HTMLParser
from pathlib import Path
from typing import ClassVar

import pytest

from tests.report.browser import first_screen, layout
from toolaudit.audits import (
    AUDITS,
    Audit,
    AuditResult,
    Registration,
    audit_headline,
    dump_result,
    load_audit,
    load_result,
    load_results,
    result_meta,
    run_audit,
    write_result,
)
from toolaudit.cli._demo import DemoResult
from toolaudit.cli.main import commands, main
from toolaudit.errors import ConfigError, DataError
from toolaudit.report import Fallback, Finding, Section, headline_sentence, record_fallback
from toolaudit.report._document import render_html
from toolaudit.report._findings import interval_bounded, interval_label


@pytest.mark.parametrize("name", list(AUDITS))
def test_registry_entry_implements_the_audit_protocol(name: str) -> None:
    audit = load_audit(name)
    assert isinstance(audit, Audit)
    assert audit.name == name
    assert issubclass(audit.result_model, AuditResult)
    assert audit.result_model.results_file.endswith(".json")
    assert "schema_version" in audit.result_model.model_fields


def test_load_audit_names_the_allowed_values_for_an_unknown_name() -> None:
    with pytest.raises(ConfigError, match="invalid audit='nope'; allowed: 'traces'"):
        load_audit("nope")


def test_registry_names_are_unique_results_files() -> None:
    files = [load_audit(n).result_model.results_file for n in AUDITS]
    assert len(set(files)) == len(files)


FAST_PARTS = ["traces", "datasets", "probe_compare"]


@pytest.fixture(scope="module")
def demo_out(tmp_path_factory: pytest.TempPathFactory, shared_data: Path) -> Path:
    """The demo's fast parts through the CLI, then leakage, redaction and the probe study
    through the registry at test size (one feature set, no dilution, 200 replicates,
    scale 0.02, one seed per probe cell). Only faults (a model run) is left out."""
    from toolaudit.leakage import FEATURE_SETS, LeakageConfig
    from toolaudit.leakage._contract import LeakageAuditConfig
    from toolaudit.probes.contracts._probe import ProbeConfig
    from toolaudit.redaction._contract import RedactionConfig

    out = tmp_path_factory.mktemp("demo")
    argv = ["demo", "--out", str(out), "--data-root", str(shared_data), "--only", *FAST_PARTS]
    assert main(argv) == 0
    leak = LeakageConfig(features=(FEATURE_SETS["char_wb_3_5"],), n_boot=200, dilution=None)
    run_audit("leakage", out, config=LeakageAuditConfig(leakage=leak))
    run_audit("redaction", out, config=RedactionConfig(scale=0.02, n_boot=200))
    run_audit("probe", out, config=ProbeConfig(n_seeds=1, n_boot=200))
    return out


def test_every_results_file_loads_back_into_its_model_byte_for_byte(demo_out: Path) -> None:
    demo = load_result(demo_out / "demo.json", DemoResult)
    assert [p.part for p in demo.parts] == FAST_PARTS
    assert all(p.status == "ok" for p in demo.parts)
    loaded = load_results(demo_out)
    assert set(loaded) == {*FAST_PARTS, "leakage", "redaction", "probe"}
    files = {name: load_audit(name).result_model.results_file for name in loaded}
    assert [p.results_file for p in demo.parts] == [files[n] for n in FAST_PARTS]
    for name, result in [*loaded.items(), ("demo", demo)]:
        path = demo_out / type(result).results_file
        assert result.schema_version == 1 and result.meta.schema_version == 1
        again = json.dumps(dump_result(result), indent=2, sort_keys=True, ensure_ascii=False)
        assert again + "\n" == path.read_text(encoding="utf-8"), name


def test_demo_results_keep_the_stable_keys(demo_out: Path) -> None:
    leak = json.loads((demo_out / "leakage.json").read_text())
    assert {"scopes", "dilution", "provenance", "prefix_lookup"} <= set(leak)
    assert {"scope", "features", "auroc", "ci95", "by_group"} <= set(leak["scopes"][0])
    red = json.loads((demo_out / "redaction.json").read_text())
    assert [v["name"] for v in red["variants"]] == ["original", "pdb_id", "peptide", "format"]
    assert set(red["calls"]) == {"requests"}  # counters are in run_log.jsonl, not results
    assert red["residual_check"]["residuals"] == 0 < red["residual_check"]["values_checked"]
    traces = json.loads((demo_out / "traces.json").read_text())
    assert {"format", "episodes", "tasks", "tool_calls", "tool_results", "mean_reward"} <= set(
        traces["files"][0]
    )
    for doc in (leak, red, traces):
        assert doc["schema_version"] == 1
        assert {"seed", "versions", "config", "fallbacks"} <= set(doc["meta"])


def test_run_audit_twice_with_the_same_seed_writes_identical_bytes(
    tmp_path: Path, shared_data: Path
) -> None:
    from toolaudit.datasets._contract import DatasetsConfig

    configs = {"traces": None, "datasets": DatasetsConfig(scale=0.01, seed=3)}
    for name, config in configs.items():
        files = []
        for k in range(2):
            out = tmp_path / f"{name}{k}"
            result = run_audit(name, out, config=config, seed=3, data_root=shared_data)
            files.append((out / type(result).results_file).read_bytes())
        assert files[0] == files[1], name


def test_load_result_names_the_failing_field(tmp_path: Path) -> None:
    model = load_audit("traces").result_model
    path = tmp_path / "traces.json"
    path.write_text(json.dumps({"schema_version": 1, "meta": {"command": "x"}, "files": [{}]}))
    with pytest.raises(DataError, match=r"traces\.json: field 'files\.0\.format'"):
        load_result(path, model)


def test_demo_without_data_records_fallbacks_everywhere(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    empty = tmp_path / "no-data"
    empty.mkdir()
    out = tmp_path / "out"
    with caplog.at_level(logging.WARNING):
        code = main(["demo", "--out", str(out), "--data-root", str(empty),
                     "--only", "traces", "leakage_tau2", "probe_compare"])  # fmt: skip
    assert code == 0
    warned = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert any("traces.public_files" in m for m in warned)
    assert any("probe.compare" in m for m in warned)
    traces = load_result(out / "traces.json", load_audit("traces").result_model)
    assert [(f.kind, f.what) for f in traces.meta.fallbacks] == [
        ("skipped_part", "traces.public_files")
    ]
    demo = load_result(out / "demo.json", DemoResult)
    assert [len(p.fallbacks) for p in demo.parts] == [1, 1, 1]
    report = (out / "report.md").read_text()
    first = report[report.index("## What the demo found") : report.index("## Overview")]
    rest = report[report.index("## Overview") :]
    # Each fallback once, in its audit's section (one table each), none in the overview.
    for what in ("traces.public_files", "leakage_tau2.files", "probe.compare"):
        assert rest.count(f"| skipped_part | {what} |") == 1, what
    assert rest.count("Fallbacks in force: 1 substitutions") == 3
    assert first.count("no verdict stated at this size") == 3
    assert first.count("**for information**") == 3
    assert "(traces: 1 fallbacks; details in its section)" in first
    assert "Fallbacks in force: 3 (traces 1, leakage_tau2 1, probe_compare 1)" in first
    # skipped parts change what a conclusion rests on, so the first screen names them
    assert "probe_compare: Fallback [skipped_part] probe.compare" in first


def test_leakage_on_the_shared_tau2_airline_files_states_a_verdict(
    tmp_path: Path, shared_data: Path
) -> None:
    from toolaudit.leakage import FEATURE_SETS, LeakageConfig

    audit = load_audit("leakage_tau2")
    config = audit.demo_config(seed=0, data_root=shared_data)
    assert [f.name for f in config.files] == [
        "airline__gpt-4.1__user-gpt-4.1__test20x1.json",
        "airline__qwen2.5-7b__user-gpt-4.1__50x1.json",
    ]
    small = LeakageConfig(features=(FEATURE_SETS["word_1_2"],), n_boot=200, dilution=None)
    result = run_audit("leakage_tau2", tmp_path, config=replace(config, leakage=small))
    assert (tmp_path / "leakage_tau2.json").exists() and result.data["examples"] == 70
    line = headline_sentence(audit.title, audit.headline(result))
    assert result.verdict["kind"] in ("none", "localized", "distributed", "inconclusive")
    assert line.startswith(f"{audit.title}: {result.verdict['kind']} — ") and "n = 70" in line


def test_faults_without_tau2_data_records_the_stand_in_domain(tmp_path: Path) -> None:
    from toolaudit.faults._run import build_payload, resolve_domain

    audit = load_audit("faults")
    config = audit.demo_config(seed=0, data_root=None)
    assert config.run.domain == "mini"  # asked for explicitly, never silently
    domain, fallbacks = resolve_domain(config.run)
    (fb,) = fallbacks
    assert (fb.kind, fb.what) == ("stand_in_data", "faults.domain")
    assert "mini" in fb.detail and len(domain.tasks) == 4
    census = {"tasks": 4, "qualifying": [], "dropped": [], "site_dropouts": {}}
    payload = build_payload([], config.run.as_dict(), census, fallbacks=fallbacks)
    payload["schema_version"] = 1
    result = audit.result_model.model_validate(payload)
    write_result(result, tmp_path)
    again = load_result(tmp_path / "faults.json", audit.result_model)
    assert [f.model_dump() for f in again.meta.fallbacks] == [fb.model_dump()]


@dataclass(frozen=True, slots=True)
class ToyConfig:
    text: str = "a b c"
    seed: int = 0


class ToyResult(AuditResult):
    results_file: ClassVar[str] = "toy.json"

    words: int


class ToyAudit:
    """A complete audit in a dozen lines: what adding one to the registry takes."""

    name = "toy"
    title = "Toy audit"
    result_model = ToyResult

    def demo_config(self, *, seed: int, data_root: Path | None) -> ToyConfig:
        return ToyConfig(seed=seed)

    def run(self, config: ToyConfig, *, out_dir: Path, progress=None) -> ToyResult:
        fallbacks: list[Fallback] = []
        record_fallback(fallbacks, Fallback(kind="simulated_component", what="toy.text",
                                            detail="a fixed sentence stands in for data"))  # fmt: skip
        meta = result_meta(command="toy", seed=config.seed, config={"text": config.text},
                           fallbacks=fallbacks)  # fmt: skip
        return ToyResult(schema_version=1, meta=meta, words=len(config.text.split()))

    def sections(self, result: ToyResult) -> list[Section]:
        return [Section(self.title).text(f"{result.words} words counted.")]


TOY_AUDIT = ToyAudit()


def test_adding_an_audit_is_one_registry_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(AUDITS, "toy", Registration(f"{__name__}:TOY_AUDIT"))
    assert main(["demo", "--out", str(tmp_path), "--only", "toy"]) == 0
    assert load_result(tmp_path / "toy.json", ToyResult).words == 3
    report = (tmp_path / "report.md").read_text()
    assert "3 words counted." in report
    assert "Fallback [simulated_component] toy.text" in report
    demo = load_result(tmp_path / "demo.json", DemoResult)
    assert [(p.part, p.results_file, len(p.fallbacks)) for p in demo.parts] == [
        ("toy", "toy.json", 1)
    ]


def test_a_new_registry_line_is_a_cli_subcommand(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(AUDITS, "toy", Registration(f"{__name__}:TOY_AUDIT"))
    assert list(commands())[-2:] == ["toy", "demo"]  # the tools stay last
    assert main(["toy", "--help"]) == 0
    help_text = capsys.readouterr().out
    assert "Toy audit" in help_text and "Example:\n  toolaudit toy --out toy-out" in help_text
    out = tmp_path / "cli"
    assert main(["toy", "--out", str(out), "--seed", "4", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc == json.loads((out / "toy.json").read_text())
    assert doc["words"] == 3 and doc["meta"]["seed"] == 4
    assert "| simulated_component | toy.text | a fixed sentence" in (out / "report.md").read_text()
    assert main(["toy", "--out", str(out)]) == 0
    assert capsys.readouterr().out.startswith("Toy audit: no verdict stated at this size\n")
    assert main(["toy", "--out", str(out), "--seed", "-1"]) == 2  # the shared validators
    assert main(["-q", "toy"]) == 2 and "--out" in capsys.readouterr().err


def test_from_payload_adds_only_new_fallbacks_and_writes_only_the_keys_given(
    tmp_path: Path,
) -> None:
    old = Fallback(kind="skipped_part", what="toy.part", detail="no data")
    meta = {"command": "toy", "seed": 1, "config": {"n": 2}, "fallbacks": [old.model_dump()]}
    payload = {"words": 2, "meta": meta}
    cut = Fallback(kind="truncation", what="toy.text", detail="cut", count=3)
    result = ToyResult.from_payload(payload, [old, cut])
    assert [(f.what, f.count) for f in result.meta.fallbacks] == [("toy.part", None),
                                                                  ("toy.text", 3)]  # fmt: skip
    assert payload["meta"] is meta  # the payload is left as it was
    path = write_result(result, tmp_path)
    doc = json.loads(path.read_text(encoding="utf-8"))
    assert set(doc) == {"meta", "schema_version", "words"} and doc["schema_version"] == 1
    assert ToyResult.new(result.meta, words=2) == result == load_result(path, ToyResult)


def test_redaction_reads_the_leakage_candidates_as_the_same_token_class(demo_out: Path) -> None:
    from toolaudit.redaction import classes_from_leakage
    from toolaudit.tokens import RegexSource, TokenClass

    doc = json.loads((demo_out / "leakage.json").read_text())
    classes = classes_from_leakage(demo_out)
    assert classes
    assert [c.name for c in classes] == [c["name"] for c in doc["provenance"]["classes"]]
    for cls, record in zip(classes, doc["provenance"]["classes"], strict=True):
        assert isinstance(cls, TokenClass)
        assert cls.sources == (RegexSource(record["pattern"]),)
        assert cls.as_json() == record  # the record leakage wrote, unchanged


class _FirstScreen(HTMLParser):
    """Collects the h2 headings (id, text), the verdict lines (href, text) and the cards'
    severities and plain sentences, in order."""

    def __init__(self) -> None:
        super().__init__()
        self.h2: list[tuple[str | None, str]] = []
        self.verdicts: list[tuple[str | None, str]] = []
        self.severities: list[str] = []
        self.plain: list[str] = []
        self._in: str | None = None
        self._href: str | None = None
        self._text = ""

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        cls = a.get("class") or ""
        if tag == "h2":
            self._in, self._text, self._id = "h2", "", a.get("id")
        elif tag == "div" and cls.startswith("card "):
            self.severities.append(cls.split("sev-", 1)[1])
        elif tag == "p" and cls in ("verdict", "plain"):
            self._in, self._text, self._href = cls, "", None
        elif tag == "a" and self._in == "verdict":
            self._href = a.get("href")

    def handle_data(self, data: str) -> None:
        if self._in:
            self._text += data

    def handle_endtag(self, tag: str) -> None:
        if tag == "h2" and self._in == "h2":
            self.h2.append((self._id, self._text))
            self._in = None
        elif tag == "p" and self._in == "verdict":
            self.verdicts.append((self._href, self._text))
            self._in = None
        elif tag == "p" and self._in == "plain":
            self.plain.append(self._text)
            self._in = None


_THREE_DECIMALS = re.compile(r"-?\d+\.\d{3}\b")


def _finding_numbers(f: Finding) -> set[str]:
    """Every 3-decimal figure a first-screen line may show for ``f``: its value, its
    interval and the numbers already rendered in its subject and comparison text."""
    nums = {f"{x:.3f}" for x in (f.value, *(f.interval or ())) if isinstance(x, float)}
    for text in (f.subject or "", str(f.details.get("versus", ""))):
        nums |= set(_THREE_DECIMALS.findall(text))
    return nums


def first_screen_mismatches(report_html: str, expected: dict[str, Finding | None]) -> list[str]:
    """Each card of the report's first screen against the headline finding computed from
    the part's results JSON (``expected``: title -> finding): the value with its interval
    and the interval's level, the p-value and n, and no figure that is not the finding's,
    in the numbers line or in the plain sentence."""
    page = _FirstScreen()
    page.feed(report_html)
    problems = []
    for (_, line), sentence in zip(page.verdicts, page.plain, strict=True):
        (title,) = [t for t in expected if line.startswith(t + ": ")]
        f = expected[title]
        if f is None:
            continue
        if f.value is not None:
            want = f"{f.details.get('metric', 'value')} {f.value:.3f}"
            if f.interval is not None and not interval_bounded(f.interval):
                want += " (interval not estimable)"
            elif f.interval is not None:
                lo, hi = f.interval
                label = interval_label(f)
                want += f" [{lo:.3f}, {hi:.3f}]" + (f" ({label})" if label else "")
            if want not in line:
                problems.append(f"{title}: {want!r} not in {line!r}")
        if f.p_value is not None and f"p = {f.p_value:.3g}" not in line:
            problems.append(f"{title}: p = {f.p_value:.3g} missing")
        if f.n is not None and f"n = {f.n}" not in line:
            problems.append(f"{title}: n = {f.n} missing")
        allowed = _finding_numbers(f)
        for where, text in (("line", line), ("sentence", sentence)):
            stray = [x for x in _THREE_DECIMALS.findall(text) if x not in allowed]
            if stray:
                problems.append(f"{title}: {where} shows {stray}, not the finding's {allowed}")
    return problems


def _all_parts_first_screen(demo_out: Path) -> tuple[str, dict[str, Finding | None]]:
    """The demo's first screen rendered (by the demo's own code) over every results file
    in ``demo_out``, and each part's headline recomputed from its JSON."""
    from toolaudit.cli._demo import DemoPart, _first_screen

    loaded = load_results(demo_out)
    parts, targets, expected = [], [], {}
    for name, result in loaded.items():
        audit = load_audit(name)
        head = audit_headline(audit, result)
        parts.append(DemoPart(part=name, status="ok", fallbacks=result.meta.fallbacks,
                              headline=head))  # fmt: skip
        targets.append((audit.title, None))
        expected[audit.title] = head
    return render_html("t", [_first_screen(parts, targets)]), expected


def test_every_first_screen_number_is_its_finding_from_the_json(demo_out: Path) -> None:
    demo_html = (demo_out / "report.html").read_text(encoding="utf-8")
    loaded = load_results(demo_out)
    fast = {load_audit(n).title: audit_headline(load_audit(n), loaded[n]) for n in FAST_PARTS}
    assert first_screen_mismatches(demo_html, fast) == []
    page, expected = _all_parts_first_screen(demo_out)
    assert {"Leakage audit", "Redaction audit"} <= set(expected) or len(expected) >= 6
    assert sum(f is not None and f.value is not None for f in expected.values()) >= 4
    assert first_screen_mismatches(page, expected) == []


def test_the_first_screen_check_catches_a_swapped_figure(demo_out: Path) -> None:
    page, expected = _all_parts_first_screen(demo_out)
    with_value = [f for f in expected.values() if f is not None and f.value is not None]
    a, b = with_value[0], with_value[1]
    assert f"{a.value:.3f}" != f"{b.value:.3f}"
    swapped = page.replace(f" {a.value:.3f}", " @A@").replace(f" {b.value:.3f}", f" {a.value:.3f}")
    swapped = swapped.replace(" @A@", f" {b.value:.3f}")
    assert first_screen_mismatches(swapped, expected) != []


def test_first_screen_cards_carry_a_severity_and_a_plain_sentence(demo_out: Path) -> None:
    page_html, expected = _all_parts_first_screen(demo_out)
    page = _FirstScreen()
    page.feed(page_html)
    assert len(page.severities) == len(page.plain) == len(expected)
    assert set(page.severities) <= {"problem", "clear", "insufficient", "info"}
    for (_, line), sentence, sev in zip(page.verdicts, page.plain, page.severities, strict=True):
        (f,) = [g for t, g in expected.items() if line.startswith(t + ": ")]
        assert sentence and (f is None or f.verdict in sentence or sev == "info"), line
        if f is not None and f.n is not None and f.n < 2:
            assert sev == "insufficient", line


def test_report_first_screen_has_one_linked_verdict_line_per_part(demo_out: Path) -> None:
    page = _FirstScreen()
    page.feed((demo_out / "report.html").read_text(encoding="utf-8"))
    assert [t for _, t in page.h2[:2]] == ["What the demo found", "Overview"]
    assert len(page.verdicts) == len(FAST_PARTS)
    ids = dict(page.h2)
    titles = [load_audit(n).title for n in FAST_PARTS]
    for (href, text), title in zip(page.verdicts, titles, strict=True):
        assert text.startswith(title + ": ")
        assert href is not None and ids[href.lstrip("#")] == title
    demo = load_result(demo_out / "demo.json", DemoResult)
    verdicts = [p.headline.verdict if p.headline else None for p in demo.parts]
    assert verdicts[0] == "8 files read" and verdicts[1] is None
    assert f"{titles[2]}: {verdicts[2]} — " in page.verdicts[2][1]
    assert all(p.seconds is not None and p.seconds >= 0 for p in demo.parts)
    md = (demo_out / "report.md").read_text(encoding="utf-8")
    assert md.index("## What the demo found") < md.index("## Overview")
    assert f"- **for information** · [{titles[0]}: 8 files read" in md


def test_leakage_headline_is_one_figure_on_card_line_table_and_verdict(demo_out: Path) -> None:
    """Issue 44: the demo's leakage card, its table and its section verdict gave three
    figures for one finding (the family-wise interval, the table's per-scope 95%
    interval, and the prefix lookup's AUROC as if it were the tool's)."""
    from tests.leakage.figures import headline_mismatches
    from toolaudit.report._document import render_markdown

    audit = load_audit("leakage")
    result = load_results(demo_out)["leakage"]
    md = render_markdown("t", audit.sections(result))
    assert headline_mismatches(result.verdict, md, title=audit.title) == []
    # the check catches a table that shows another interval for the same figure
    f = audit_headline(audit, result)
    assert f is not None and f.value is not None and f.interval is not None
    cell = f"{f.value:.3f} [{f.interval[0]:.3f}, {f.interval[1]:.3f}]"
    assert cell in md
    other = md.replace(cell, f"{f.value:.3f} [0.001, 0.999]")
    assert headline_mismatches(result.verdict, other, title=audit.title) != []


def test_report_renders_in_headless_chromium(demo_out: Path, tmp_path: Path) -> None:
    data = first_screen(demo_out / "report.html", tmp_path)
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10_000
    # No horizontal overflow: the page's scroll width equals its client width at 1280 px
    # (wide tables scroll inside their own box, figures fit), and every figure decodes.
    page = layout(demo_out / "report.html", tmp_path)
    assert page.scroll_width == page.client_width, f"page overflows: {page}"
    assert page.images > 0 and page.broken_images == 0, page


def test_leakage_figures_and_tables_read_at_1280_px_in_chromium(
    demo_out: Path, tmp_path: Path
) -> None:
    """Issue 44: the leakage section's figures laid out at 1280 px are shown no smaller
    than render_figure assumed (so their text is at least MIN_TEXT_PX), table captions
    span the content width, and nothing overflows the page."""
    from toolaudit.report import Figure, write_report
    from toolaudit.report._document import CONTENT_PX, MIN_TEXT_PX

    audit = load_audit("leakage")
    sections = audit.sections(load_results(demo_out)["leakage"])
    figures = [b for s in sections for b in s.blocks if isinstance(b, Figure)]
    assert figures and all(f.text_px is not None and f.text_px >= MIN_TEXT_PX for f in figures)
    report = write_report(tmp_path / "r", "leakage", sections)
    page = layout(report, tmp_path)
    assert page.content_width >= CONTENT_PX, page  # the width render_figure scales to
    assert page.images == len(figures) and page.broken_images == 0, page
    assert page.shrunk_images == 0 and page.narrow_captions == 0, page
    assert page.scroll_width == page.client_width, page


def test_result_meta_is_run_metadata_as_a_model() -> None:
    """``meta`` is built in one place (report.run_metadata); the audits' model form writes
    the same keys, and a fallback's unset fields stay unwritten."""
    from toolaudit.audits._io import result_meta
    from toolaudit.report import Fallback, run_metadata

    fb = [Fallback(kind="skipped_part", what="x.y", detail="why")]
    meta = result_meta(command="c", seed=3, config={"a": [1, 2]}, fallbacks=fb)
    doc = meta.model_dump(mode="json", exclude_unset=True)
    plain = run_metadata(command="c", seed=3, config={"a": [1, 2]})
    assert {k: v for k, v in doc.items() if k != "fallbacks"} == {
        k: v for k, v in plain.items() if k != "fallbacks"
    }
    assert doc["fallbacks"] == [{"kind": "skipped_part", "what": "x.y", "detail": "why"}]


def test_a_mined_class_named_like_a_built_in_is_renamed_not_shadowing_it(
    demo_out: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A --class-from candidate named pdb_id used to replace the built-in pdb_id class
    silently (and the redaction reported ΔA 0 for it)."""
    from toolaudit.redaction import classes_from_leakage, select_classes

    doc = json.loads((demo_out / "leakage.json").read_text())
    doc["provenance"]["classes"][0]["name"] = "pdb_id"
    (tmp_path / "leakage.json").write_text(json.dumps(doc))
    with caplog.at_level("WARNING"):
        mined = classes_from_leakage(tmp_path)
    assert mined[0].name == "mined.pdb_id"
    assert "candidate class 'pdb_id' has a built-in class's name" in caplog.text
    names = [c.name for c in select_classes(["pdb_id"], mined)]
    assert names[0] == "pdb_id" and "mined.pdb_id" in names

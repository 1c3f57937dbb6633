"""The redaction audit end to end: the controlled benchmark with the real controlled frozen
model (the seed's finding at small scale), the response cache, and the statistics."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from toolaudit.datasets import SMALL_STRENGTH, make_tcr_shortcut
from toolaudit.errors import DataError
from toolaudit.models import CachedModel, SklearnModel, train_controlled_model
from toolaudit.redaction import RedactionResidualError, RedactionResult, RegexSource, make_class
from toolaudit.redaction._audit import run_redaction, select_rows
from toolaudit.redaction._registry import BUILTIN_CLASSES, default_classes
from toolaudit.stats import auroc
from toolaudit.traces import Example

from .test_scoring import KeywordModel

SCALE = 0.05  # 647 C0/train rows, 245 test rows (13 positive) in C1..C5
# The seed-calibrated default strength (tool 3 at 0.64 at full scale) is too weak for a
# frozen model trained on 647 rows to show the finding on 13 positives; the documented
# small configuration's strength does (docs/datasets.md).


@pytest.fixture(scope="module")
def controlled(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[Example], object, Path]:
    examples = make_tcr_shortcut(scale=SCALE, seed=0, strength=SMALL_STRENGTH)
    pipe = train_controlled_model(examples, seed=0)
    return examples, pipe, tmp_path_factory.mktemp("cache") / "cache.sqlite"


@pytest.fixture(scope="module")
def controlled_result(controlled: tuple[list[Example], object, Path]) -> RedactionResult:
    examples, pipe, cache = controlled
    model = CachedModel(SklearnModel.from_pipeline(pipe, identity="sklearn:test-controlled"), cache)
    rows = select_rows(examples, eval_filter={"split": ["test"]})
    return run_redaction(rows, model, classes=default_classes(examples), seed=0, n_boot=500)


def test_run_redaction_reproduces_the_seed_finding_on_the_controlled_benchmark(
    controlled_result: RedactionResult,
) -> None:
    res = controlled_result
    assert [v.name for v in res.variants] == ["original", "pdb_id", "peptide", "format"]
    orig, pdb, pep = (res.variant(n) for n in ("original", "pdb_id", "peptide"))
    assert set(res.groups) == {"C1", "C2", "C3", "C4", "C5"} and len(res.labels) == 245
    # Margins sized for 13 positives: clearly above chance, identifier redaction back to
    # chance, peptide control unchanged.
    assert orig.auroc > 0.62 and orig.ci95[0] > 0.5
    assert abs(pdb.auroc - 0.5) < 0.05
    assert pdb.delta is not None and pdb.delta > 0.1 and pdb.delta_ci95[0] > 0
    assert pep.delta is not None and abs(pep.delta) < 0.02


def test_run_redaction_counts_replacements_and_zero_residuals(
    controlled_result: RedactionResult,
) -> None:
    pdb, pep, fmt = (controlled_result.variant(n) for n in ("pdb_id", "peptide", "format"))
    # Each row's id: file name + complex_id in prompt, user message and tools; the id
    # itself plus two copies in meta.extra_info.
    assert pdb.replacements == 245 * 9 and pdb.rows_affected == 245
    assert pdb.replacements_by_location == {"prompt": 490, "messages": 490, "tools": 490,
                                            "fields": 0, "meta": 735}  # fmt: skip
    assert pep.replacements_by_location["fields"] == 245 and pep.replacements > 245 * 9
    assert fmt.replacements > 100 * pdb.replacements
    assert all(v.residuals == 0 for v in controlled_result.variants)
    assert all(v.valid_rate == 1.0 for v in controlled_result.variants)


def test_run_redaction_keeps_one_prompt_before_and_after_per_class(
    controlled_result: RedactionResult, controlled: tuple[list[Example], object, Path]
) -> None:
    from toolaudit.redaction._report import report_sections
    from toolaudit.report._document import render_html

    ex = {e["variant"]: e for e in controlled_result.examples}
    assert list(ex) == ["pdb_id", "peptide", "format"]
    first = next(e for e in controlled[0] if e.id == ex["pdb_id"]["row"])
    pdb = str(first.meta["pdb_id"]) if "pdb_id" in first.meta else None
    before, after = ex["pdb_id"]["before"], ex["pdb_id"]["after"]
    assert "<PDB_ID>" in after and "<PDB_ID>" not in before
    assert pdb is None or (pdb in before and pdb not in after)
    assert len(before.splitlines()) <= 18  # the changed lines with context, not the prompt
    page = render_html("R", report_sections(controlled_result))
    # every replacement in the excerpt is marked, not only the first
    marked = re.findall(r"<mark>[^<]*&lt;PDB_ID&gt;[^<]*</mark>", page)
    assert len(marked) == after.count("<PDB_ID>") >= 2


def test_run_redaction_statistics_match_direct_computation(
    controlled_result: RedactionResult,
) -> None:
    res = controlled_result
    y = np.array(res.labels)
    g = np.array(res.groups)
    orig, pdb = res.variant("original"), res.variant("pdb_id")
    s0, s1 = np.array(orig.scores), np.array(pdb.scores)
    assert orig.auroc == pytest.approx(auroc(y, s0))
    assert pdb.delta == pytest.approx(auroc(y, s0) - auroc(y, s1))
    assert pdb.by_group["C4"] == pytest.approx(auroc(y[g == "C4"], s1[g == "C4"]))
    assert pdb.by_group_delta["C4"] == pytest.approx(orig.by_group["C4"] - pdb.by_group["C4"])
    assert pdb.delta_ci95[0] <= pdb.delta <= pdb.delta_ci95[1]
    assert 0.0 < pdb.p_value <= 1.0


def test_run_redaction_rerun_is_served_from_the_cache(
    controlled: tuple[list[Example], object, Path], controlled_result: RedactionResult
) -> None:
    examples, pipe, cache = controlled
    assert controlled_result.calls == {"made": 245 * 4 * 10, "cached": 0}
    model = CachedModel(SklearnModel.from_pipeline(pipe, identity="sklearn:test-controlled"), cache)
    rows = select_rows(examples, eval_filter={"split": ["test"]})
    again = run_redaction(rows, model, classes=[BUILTIN_CLASSES["pdb_id"]], seed=0, n_boot=100)
    assert again.calls == {"made": 0, "cached": 245 * 2 * 10}
    assert again.variant("pdb_id").scores == controlled_result.variant("pdb_id").scores


def _kw_rows(n: int) -> list[Example]:
    rows = []
    for i in range(n):
        label = int(i % 3 == 0)
        text = f"id {'K' if label else 'Q'}{i:03d}X " + ("BIND" if i % 2 else "")
        rows.append(Example(id=f"r{i}", label=label, group=f"G{i % 2}", split="test",
                            prompt=text, meta={"copy": text}))  # fmt: skip
    return rows


def test_select_rows_filters_and_balances_a_limited_sample() -> None:
    rows = _kw_rows(30) + [Example(id="t", label=1, group="G0", split="train", prompt="x")]
    picked = select_rows(rows, eval_filter={"split": ["test"]}, limit=8, seed=3)
    assert len(picked) == 8 and sum(r.label for r in picked) == 4
    assert all(r.split == "test" for r in picked)
    assert [r.id for r in picked] == sorted((r.id for r in picked), key=lambda s: int(s[1:]))
    assert picked == select_rows(rows, eval_filter={"split": ["test"]}, limit=8, seed=3)
    with pytest.raises(DataError, match="no rows match"):
        select_rows(rows, eval_filter={"split": ["val"]})


def test_run_redaction_single_label_rows_are_rejected() -> None:
    rows = [r for r in _kw_rows(9) if r.label == 0]
    with pytest.raises(DataError, match="single label"):
        run_redaction(rows, KeywordModel(), classes=[])


def test_run_redaction_with_an_uncached_model_counts_every_request() -> None:
    rows = [
        Example(id=f"r{i}", label=int(i < 6), group=f"G{i % 2}", split="test",
                prompt=("BIND " if i < 5 or i == 9 else "") + f"row {i}",
                meta={"copy": "BIND" if i < 5 else "none"})
        for i in range(12)
    ]  # fmt: skip
    cls = make_class("keyword", [RegexSource(r"(BIND)")])
    res = run_redaction(rows, KeywordModel(), classes=[cls], scoring="options", n_boot=300)
    assert res.calls == {"made": 12 * 2 * 10, "cached": 0}
    orig, red = res.variant("original"), res.variant("keyword")
    y = np.array([r.label for r in rows])
    hits = np.array([0.9 if (i < 5 or i == 9) else 0.2 for i in range(12)])
    assert orig.auroc == pytest.approx(auroc(y, hits))
    assert red.auroc == pytest.approx(0.5) and red.scores == pytest.approx((0.2,) * 12)
    assert red.delta == pytest.approx(orig.auroc - 0.5)
    assert red.replacements == 6 + 5 and red.rows_affected == 6


def test_run_redaction_refuses_to_score_when_a_planted_copy_survives(
    controlled: tuple[list[Example], object, Path], tmp_path: Path
) -> None:
    examples, pipe, _ = controlled
    rows = select_rows(examples, eval_filter={"split": ["test"]}, limit=20, seed=0)
    model = CachedModel(
        SklearnModel.from_pipeline(pipe, identity="sklearn:test-refuse"), tmp_path / "c.sqlite"
    )
    clean = run_redaction(rows, model, classes=[BUILTIN_CLASSES["pdb_id"]], seed=0, n_boot=50)
    assert clean.residual_check["residuals"] == 0
    assert clean.residual_check["values_checked"] >= len(rows)
    pdb = rows[3].meta["pdb_id"]
    url = f"https://rcsb.example/search?q%3D{pdb}%26type%3Dentry"
    planted = [*rows[:3], rows[3].model_copy(update={"meta": {**rows[3].meta, "url": url}}),
               *rows[4:]]  # fmt: skip
    fresh = CachedModel(
        SklearnModel.from_pipeline(pipe, identity="sklearn:test-refuse2"), tmp_path / "d.sqlite"
    )
    with pytest.raises(RedactionResidualError, match=rf"pdb_id: 1\); first: .*'meta\.url'.*{pdb}"):
        run_redaction(planted, fresh, classes=[BUILTIN_CLASSES["pdb_id"]], seed=0, n_boot=50)
    assert fresh.calls["made"] == 0  # refused before any model call


def test_run_redaction_records_invalid_answers_and_empty_classes_as_fallbacks(
    caplog: pytest.LogCaptureFixture,
) -> None:
    rows = [
        Example(id=f"r{i}", label=int(i < 4), group="G", split="test",
                prompt=("BIND " if i < 3 else "") + ("GARBLE " if i == 7 else "") + f"row {i}")
        for i in range(8)
    ]  # fmt: skip
    nothing = make_class("nothing", [RegexSource(r"(ZZZ\d+)")])
    with caplog.at_level("WARNING"):
        res = run_redaction(rows, KeywordModel(), classes=[nothing], scoring="generate", n_boot=50)
    got = {(f.kind, f.what, f.count) for f in res.fallbacks}
    assert got == {
        ("other", "redaction.original.invalid_answers", 1),
        ("other", "redaction.nothing.invalid_answers", 1),
        ("empty_pool", "redaction.nothing", 0),
    }
    assert "Fallback [empty_pool] redaction.nothing" in caplog.text


def test_a_variant_whose_answers_cannot_be_read_is_not_estimable() -> None:
    """A redaction that leaves the model unable to answer in the format (here the
    placeholder <GARBLE> makes the test model reply "no idea") must not read as "no
    significant change": its ΔA only ranks the fixed invalid score."""
    from toolaudit.redaction import RedactionResults
    from toolaudit.redaction._contract import dependence_finding
    from toolaudit.redaction._report import finding_sentence, result_payload, variant_findings
    from toolaudit.report import run_metadata
    from toolaudit.report._cards import verdict_card

    rows = [
        Example(id=f"r{i}", label=int(i < 4), group="G", split="test",
                prompt=("BIND " if i < 3 else "") + f"row {i} <answer></answer>")
        for i in range(8)
    ]  # fmt: skip
    classes = [make_class("garble", [RegexSource(r"(row)")]),
               make_class("control", [RegexSource(r"(ZZZ\d+)")])]  # fmt: skip
    res = run_redaction(rows, KeywordModel(), classes=classes, scoring="generate", n_boot=50)
    assert [v.valid_rate for v in res.variants] == [1.0, 0.0, 1.0]
    by_name = {f.subject: f for f in variant_findings(res)}
    assert by_name["garble"].verdict == "not_estimable"
    assert by_name["control"].verdict == "no_change"
    text = finding_sentence(by_name["garble"])
    assert "is not estimable: 0% of its answers could be read (original 100%" in text
    meta = run_metadata(command="t", seed=0, config={})
    doc = RedactionResults.from_payload(result_payload(res, classes, meta))
    f = dependence_finding(doc, target="garble", control="control")
    assert f is not None and f.verdict == "not_estimable"
    assert f.details["valid_rates"] == {"original": 1.0, "garble": 0.0, "control": 1.0}
    card = verdict_card("Redaction", f)
    assert card.severity == "insufficient"
    assert "valid rates original 1.000, garble 0.000, control 1.000" in card.sentence

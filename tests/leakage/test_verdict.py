"""The verdict layer on data built for each case: localized, distributed, none; the
presence control; the prefix-lookup gate; and the sentence follows the finding."""

from __future__ import annotations

import numpy as np
import pytest

from toolaudit.leakage import LeakageConfig, run_leakage
from toolaudit.leakage._features import FEATURE_SETS
from toolaudit.leakage._wording import verdict_sentence
from toolaudit.report import Finding
from toolaudit.traces import Example, ToolSection

VOCAB = [f"w{i}" for i in range(40)]
CFG = LeakageConfig(
    features=(FEATURE_SETS["word_1_2"], FEATURE_SETS["char_wb_3_5"]),
    n_boot=300,
    dilution=None,
)


def _noise(rng: np.random.Generator, n: int) -> str:
    return " ".join(str(w) for w in rng.choice(VOCAB, size=n))


def _example(i: int, label: int, tools: list[tuple[str, str]], n: int) -> Example:
    split = "train" if i < int(n * 0.6) else "test"
    return Example(
        id=f"e{i}",
        label=label,
        group=f"G{i % 4}",
        split=split,
        tools=[ToolSection(name=a, content=b) for a, b in tools],
    )


def localized_examples(n: int = 300, seed: int = 0) -> list[Example]:
    """An id in tool ``ids`` whose first digit predicts the label; long label-free
    noise in four other tools dilutes it in the full trace."""
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        label = int(rng.random() < 0.35)
        first = rng.choice(["7", "8"]) if label else rng.choice(["1", "2", "8"])
        tools = [(f"n{t}", _noise(rng, 60)) for t in range(4)]
        tools.insert(2, ("ids", f"file: run_{first}{rng.integers(100, 999)}.csv"))
        out.append(_example(i, label, tools, n))
    return out


def distributed_examples(n: int = 400, seed: int = 0) -> list[Example]:
    """Six tools, each with a weak, independent hint of the label: no tool alone is
    strong, their sum in the full trace is."""
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        label = int(rng.random() < 0.5)
        p = 0.7 if label else 0.3
        tools = [
            (f"t{t}", f"{_noise(rng, 6)} status {'pass' if rng.random() < p else 'fail'}")
            for t in range(6)
        ]
        out.append(_example(i, label, tools, n))
    return out


def null_examples(n: int = 400, seed: int = 0) -> list[Example]:
    """Label drawn independently of every tool text."""
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        label = int(rng.random() < 0.4)
        tools = [(f"t{t}", _noise(rng, 20)) for t in range(3)]
        out.append(_example(i, label, tools, n))
    return out


def presence_examples(n: int = 400, seed: int = 0) -> list[Example]:
    """Successful runs call ``refund`` twice, failed ones once or never; every tool
    returns label-free boilerplate."""
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        label = int(rng.random() < 0.5)
        calls = int(rng.choice([1, 2, 2])) if label else int(rng.choice([0, 0, 1]))
        tools = [("lookup", _noise(rng, 10))]
        tools += [("refund", "refund accepted " + _noise(rng, 5)) for _ in range(calls)]
        tools.append(("reply", _noise(rng, 10)))
        out.append(_example(i, label, tools, n))
    return out


@pytest.fixture(scope="module")
def localized():
    return run_leakage(localized_examples(), CFG)


def test_verdict_localized_names_carrier_and_class(localized):
    v = localized.verdict
    assert v["kind"] == "localized"
    assert v["carrier"] == "ids"
    assert v["carrier_class"] == "ids.file"
    finding = localized.finding()
    assert finding.details["minus_full_low"] > 0
    assert finding.interval[0] > 0.5
    assert v["sentence"].startswith("Verdict: localized.")
    assert "`ids`" in v["sentence"] and "ids.file" in v["sentence"]


def test_verdict_localized_runs_prefix_lookup_on_carrier_class(localized):
    assert localized.prefix_lookup["class"] == "ids.file"
    assert localized.prefix_lookup["rows"][0]["auroc"] > 0.7


def test_verdict_distributed_when_full_trace_beats_every_tool():
    result = run_leakage(distributed_examples(), CFG)
    v = result.verdict
    assert v["kind"] == "distributed", v["sentence"]
    assert v["carrier"] is None
    full = result.table("word_1_2")["full"]
    assert full > max(a for s, a in result.table("word_1_2").items() if s != "full") + 0.05
    assert v["sentence"].startswith("Verdict: distributed.")
    # every example calls the same tools once: the presence control is skipped, on record
    assert result.presence["skipped"]
    assert any(f.what == "leakage.presence_control" for f in result.fallbacks)


def test_verdict_none_on_label_free_text():
    result = run_leakage(null_examples(), CFG)
    v = result.verdict
    assert v["kind"] == "none", v["sentence"]
    assert all(r.summary.ci95[0] <= 0.5 for r in result.scopes)
    assert v["sentence"].startswith("Verdict: none.")
    # no class linked to a carrier is present: the prefix lookup is skipped with a reason
    assert result.prefix_lookup["rows"] == [] and result.prefix_lookup["skipped"]
    assert any(f.kind == "skipped_part" for f in result.fallbacks)


def test_presence_control_explains_actions_taken():
    result = run_leakage(presence_examples(), CFG)
    pres = result.finding().details["presence"]
    assert result.presence["auroc"] > 0.7
    assert pres["explains_full"] is True
    assert "readable from the actions taken" in result.verdict["sentence"]


def test_verdict_sentence_changes_with_finding():
    base = Finding(
        name="leakage.verdict",
        verdict="none",
        value=0.52,
        interval=(0.47, 0.57),
        n=300,
        subject="full",
        details={"features": "char_wb_3_5"},
    )
    text = verdict_sentence(base)
    assert "0.520" in text and "[0.470, 0.570]" in text
    moved = base.model_copy(update={"value": 0.55, "interval": (0.49, 0.61)})
    assert verdict_sentence(moved) != text and "0.550" in verdict_sentence(moved)
    flipped = base.model_copy(
        update={"verdict": "localized", "subject": "t2", "details": {"minus_full_low": 0.1}}
    )
    assert verdict_sentence(flipped).startswith("Verdict: localized.")


def _pres(auroc, ci, delta=None, explains=False):
    out = {"auroc": auroc, "ci": ci, "above_chance": ci[0] > 0.5, "explains_full": explains}
    if delta is not None:
        out["full_minus_presence"] = {"delta": delta[0], "ci": list(delta[1:]), "level": 0.99}
    return out


@pytest.mark.parametrize(
    ("pres", "says", "never"),
    [
        # presence explains the full trace: both above chance, the gap not above 0
        (
            _pres(0.84, [0.71, 0.93], (0.02, -0.05, 0.09), explains=True),
            "the full trace is not reliably above it (full trace minus presence +0.020",
            "reliably above it:",
        ),
        # presence below the full trace: the gap reliably above 0
        (
            _pres(0.70, [0.58, 0.80], (0.21, 0.12, 0.30)),
            "the full trace is reliably above it (full trace minus presence +0.210",
            "not reliably above",
        ),
        # presence at chance
        (
            _pres(0.52, [0.41, 0.63], (0.30, 0.18, 0.41)),
            "is not reliably above chance (AUROC 0.520",
            "reliably above it",
        ),
        # the full trace at chance, presence high (the real Inspect logs' case)
        (
            _pres(0.918, [0.80, 0.99], (-0.418, -0.891, 0.200)),
            "while the full trace is not reliably above chance (full trace minus presence -0.418",
            "reliably above it",
        ),
    ],
)
def test_presence_sentence_is_right_in_each_case(pres, says, never):
    from toolaudit.leakage._wording import _presence_tail

    text = _presence_tail(pres)
    assert says in text and never not in text


def test_presence_sentence_says_below_when_the_gap_is_reliably_negative():
    from toolaudit.leakage._wording import _presence_tail

    text = _presence_tail(_pres(0.95, [0.88, 0.99], (-0.30, -0.45, -0.12)))
    assert "the full trace is reliably below it" in text


def test_heatmap_with_many_groups_shows_the_top_twenty_and_counts_the_rest() -> None:
    from toolaudit.leakage._report import MAX_HEATMAP_GROUPS, heatmap_groups

    groups = [f"g{i:02d}" for i in range(50)]
    # g00..g29 are scored in both scopes, g30..g49 in one; size grows with the index
    by_group = {g: {"auroc": 0.6, "n": i} for i, g in enumerate(groups)}
    sparse = {g: ({"auroc": 0.6, "n": i} if i < 30 else {}) for i, g in enumerate(groups)}
    payload = {"scopes": [{"features": "f", "by_group": by_group},
                          {"features": "f", "by_group": sparse}]}  # fmt: skip
    shown = heatmap_groups(payload, "f", groups)
    assert len(shown) == MAX_HEATMAP_GROUPS == 20
    assert shown == [f"g{i:02d}" for i in range(10, 30)]  # the most scored, largest first
    assert heatmap_groups(payload, "f", groups[:12]) == groups[:12]


def test_per_group_table_leaves_out_groups_undefined_in_every_scope() -> None:
    """Issue 26: the tau2 per-group table and heatmap had about 50 columns, mostly
    undefined (groups with one class); only groups with an AUROC somewhere are shown."""
    from toolaudit.leakage._report import defined_groups

    one = {"a": {"auroc": None, "n": 1}, "b": {"auroc": 0.5, "n": 2}, "c": {"auroc": None}}
    # NaN: the audit's own result before it is written as JSON null
    two = {"a": {"auroc": float("nan")}, "b": {"auroc": None}, "c": {"auroc": 1.0, "n": 2}}
    other = {"a": {"auroc": 0.7, "n": 9}}  # another feature set: does not count
    payload = {"scopes": [{"features": "f", "by_group": one}, {"features": "f", "by_group": two},
                          {"features": "g", "by_group": other}]}  # fmt: skip
    assert defined_groups(payload, "f", ["a", "b", "c", "d"]) == ["b", "c"]

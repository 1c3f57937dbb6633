"""The engine reproduces scikit-learn's TfidfVectorizer + LogisticRegression exactly."""

from __future__ import annotations

import numpy as np
import pytest

from toolaudit.leakage import FEATURE_SETS, FeatureSpec, LRSpec, PT2DEngine
from toolaudit.leakage._reference import reference_fit
from toolaudit.stats import auroc


def _compare(examples, tools, spec, *, fit, ev):
    engine = PT2DEngine(examples, [spec])
    counts = engine.counts(spec.analyzer, tools if tools is not None else list(engine.tools))
    design = engine.design(counts, spec, fit, ev)
    ref = reference_fit(examples, tools, spec, LRSpec(), fit, ev)
    ours = engine.terms(spec.analyzer, design.vocab)
    assert ours == ref.vocabulary
    ref_fit = ref.x_fit.copy()
    ref_fit.sort_indices()
    assert abs(design.x_fit.tocsr() - ref_fit).max() <= 1e-12
    assert abs(design.x_eval - ref.x_eval).max() <= 1e-12
    y = np.array([e.label for e in examples])
    model = LRSpec().make().fit(design.x_fit.tocsr(), y[fit])
    diff = abs(auroc(y[ev], model.decision_function(design.x_eval)) - auroc(y[ev], ref.scores))
    assert diff <= 1e-9
    return len(ours)


def _split(examples):
    fit = np.array([i for i, e in enumerate(examples) if e.split == "train"])
    ev = np.array([i for i, e in enumerate(examples) if e.split == "test"])
    return fit, ev


@pytest.mark.parametrize("name", list(FEATURE_SETS))
@pytest.mark.parametrize("tools", [None, ["t2"], ["t1"], ["t0", "t1", "t3"], ["t3", "t0"]])
def test_engine_matches_tfidfvectorizer_on_adversarial_text(adversarial, name, tools):
    base = FEATURE_SETS[name]
    spec = FeatureSpec(base.name, base.analyzer, base.ngram_range, 60, 2)
    fit, ev = _split(adversarial)
    assert _compare(adversarial, tools, spec, fit=fit, ev=ev) == 60


def test_engine_matches_tfidfvectorizer_with_boundary_bigrams_over_empty_sections(adversarial):
    # t1 is empty in every 7th example and t3 is whitespace only in every 5th: bigrams
    # then join the last token before the gap with the first token after it.
    spec = FeatureSpec("w", "word", (1, 2), None, 1)
    fit, ev = _split(adversarial)
    n = _compare(adversarial, None, spec, fit=fit, ev=ev)
    assert n > 100


@pytest.mark.parametrize("name", list(FEATURE_SETS))
def test_engine_matches_tfidfvectorizer_on_controlled_benchmark(tcr_small, name):
    fit, ev = _split(tcr_small)
    spec = FEATURE_SETS[name]  # the seed's max_features and min_df
    for tools in (None, ["thermompnn_ddg"], ["thermompnn_ddg", "cdr3b_biophysics"]):
        assert _compare(tcr_small, tools, spec, fit=fit, ev=ev) > 1000


def test_engine_interleaved_sections_match_trace_order():
    from toolaudit.traces import Example, ToolSection

    rows = []
    for i in range(30):
        secs = [("get", f"id {i % 4} ok"), ("put", f"saved {i} x"), ("get", f"more {i % 3}")]
        if i % 2:
            secs = secs[::-1]
        rows.append(
            Example(
                id=str(i),
                label=i % 2,
                group=str(i % 5),
                split="train" if i < 20 else "test",
                tools=[ToolSection(name=n, content=c) for n, c in secs],
            )
        )
    spec = FeatureSpec("w", "word", (1, 2), None, 1)
    fit, ev = _split(rows)
    assert _compare(rows, None, spec, fit=fit, ev=ev) > 5

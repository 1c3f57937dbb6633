"""The scikit-learn backend and the controlled frozen model."""

from __future__ import annotations

import math

import numpy as np
import pytest

from toolaudit.errors import DataError, ModelError
from toolaudit.models import SklearnModel, load_model, save_pipeline, train_controlled_model
from toolaudit.models._sklearn import option_logprob
from toolaudit.traces._schema import Example

_WORDS = ["kinase", "loop", "helix", "ddG", "score", "pocket", "contact", "residue", "chain"]


def planted_examples(n: int, *, seed: int) -> list[Example]:
    """Noise text plus an id whose two leading characters depend on the label."""
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        label = int(rng.integers(0, 2))
        prefix = rng.choice(["2X", "5N"] if label else ["1Q", "6L"])
        noise = " ".join(rng.choice(_WORDS, size=30))
        ident = prefix + "".join(rng.choice(list("ABCDEFGH0123456789"), size=2))
        group = "C0" if i < n // 2 else f"C{1 + i % 5}"
        split = ("train" if i % 4 else "val") if group == "C0" else "test"
        out.append(
            Example(
                id=f"e{i}",
                label=label,
                group=group,
                split=split,
                prompt=f"{noise}\ncomplex_id: {ident}\n{noise}",
            )
        )
    return out


@pytest.fixture(scope="module")
def planted():
    examples = planted_examples(240, seed=3)
    return examples, train_controlled_model(examples, seed=0)


@pytest.mark.parametrize("p", [0.0, 0.13, 0.5, 0.87, 1.0])
def test_option_logprob_is_binomial_with_mean_mapping_to_p(p):
    probs = np.array([math.exp(option_logprob(k, p)) for k in range(1, 11)])
    assert probs.sum() == pytest.approx(1.0, abs=1e-12)
    expected = float((np.arange(1, 11) * probs).sum())
    assert (expected - 1) / 9 == pytest.approx(p, abs=1e-12)


def test_sklearn_model_option_scores_recover_probability(planted):
    examples, pipe = planted
    lm = SklearnModel.from_pipeline(pipe, identity="sklearn:test")
    prompts = [e.prompt for e in examples[:5]]
    p = lm.probabilities(prompts)
    for prompt, pi in zip(prompts, p, strict=True):
        rows = lm.loglikelihood([(prompt, str(k)) for k in range(1, 11)])
        probs = np.exp([r[0] for r in rows])
        assert (float((np.arange(1, 11) * probs).sum()) - 1) / 9 == pytest.approx(pi, abs=1e-9)
    # Wrapped answers and a trailing "<answer>" on the context score the same.
    same = lm.loglikelihood([(prompts[0] + "\n<answer>", "<answer>7</answer>")])
    assert same == lm.loglikelihood([(prompts[0], "7")])


def test_sklearn_model_generate_rounds_to_answer_option(planted):
    examples, pipe = planted
    lm = SklearnModel.from_pipeline(pipe, identity="sklearn:test")
    prompts = [e.prompt for e in examples[:6]]
    got = lm.complete(prompts)
    assert got == [
        f"<answer>{1 + math.floor(9 * p + 0.5)}</answer>" for p in lm.probabilities(prompts)
    ]
    assert lm.complete(prompts[:1], stop=["</answer>"])[0] == got[0].removesuffix("</answer>")


def test_sklearn_model_rejects_non_option_continuation(planted):
    lm = SklearnModel.from_pipeline(planted[1], identity="sklearn:test")
    for bad in ["11", "0", "yes", " 3.5"]:
        with pytest.raises(ModelError, match="answer options 1..10"):
            lm.loglikelihood([("ctx", bad)])


def test_train_controlled_model_learns_planted_shortcut(planted):
    examples, pipe = planted
    from sklearn.metrics import roc_auc_score

    test = [e for e in examples if e.split == "test"]
    p = pipe.predict_proba([e.prompt for e in test])[:, 1]
    assert roc_auc_score([e.label for e in test], p) > 0.9


def test_train_controlled_model_uses_only_c0_train(planted):
    examples, pipe = planted
    # Flipping every label outside C0/train must not change the fitted model.
    flipped = [
        e
        if (e.group == "C0" and e.split == "train")
        else e.model_copy(update={"label": 1 - e.label})
        for e in examples
    ]
    other = train_controlled_model(flipped, seed=0)
    probe = [e.prompt for e in examples[:20]]
    np.testing.assert_allclose(other.predict_proba(probe), pipe.predict_proba(probe))


def test_train_controlled_model_needs_both_labels():
    rows = [e.model_copy(update={"label": 1}) for e in planted_examples(40, seed=1)]
    with pytest.raises(DataError, match="both labels"):
        train_controlled_model(rows, seed=0)


def test_sklearn_spec_loads_saved_pipeline_with_file_digest(planted, tmp_path):
    path = save_pipeline(planted[1], tmp_path / "frozen.joblib")
    lm = load_model(f"sklearn:{path}")
    assert lm.identity.startswith(f"sklearn:{path}@") and len(lm.identity.split("@")[1]) == 16
    prompt = planted[0][0].prompt
    assert lm.complete([prompt]) == SklearnModel.from_pipeline(planted[1], identity="x").complete(
        [prompt]
    )
    with pytest.raises(ModelError, match="no such model file"):
        load_model(f"sklearn:{tmp_path / 'missing.joblib'}").complete(["x"])


@pytest.mark.slow
def test_controlled_model_learns_tcr_shortcut_above_chance():
    from sklearn.metrics import roc_auc_score

    from toolaudit.datasets._tcr_shortcut import make_tcr_shortcut

    examples = make_tcr_shortcut(scale=0.05, seed=0)
    pipe = train_controlled_model(examples, seed=0)
    test = [e for e in examples if e.split == "test"]
    p = pipe.predict_proba([e.prompt for e in test])[:, 1]
    assert roc_auc_score([e.label for e in test], p) > 0.6


def test_train_controlled_model_penalty_is_l1_on_this_sklearn(planted):
    from toolaudit.models._sklearn import l1_penalty

    _, pipe = planted
    clf = pipe.named_steps["clf"]
    # The explicit L1 setting, whichever keyword this scikit-learn version reads.
    assert l1_penalty() in ({"l1_ratio": 1.0}, {"penalty": "l1"})
    assert all(getattr(clf, k) == v for k, v in l1_penalty().items())
    # L1 drops most noise n-grams: most weights are exactly zero (L2 leaves none at 0).
    coef = clf.coef_.ravel()
    assert coef.size > 100 and (coef == 0).mean() > 0.8

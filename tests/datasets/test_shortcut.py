"""The planted shortcut is the only label signal: the id prefix predicts the label in
every cluster, the rest of the tool text does not."""

from __future__ import annotations

from collections import defaultdict

import numpy as np
import pytest

from toolaudit.datasets import make_tcr_shortcut, prefix_auroc
from toolaudit.datasets._identifiers import BATCHES, sample_pdb_ids
from toolaudit.datasets._plan import TCR_TABLE2, plan_counts
from toolaudit.datasets._tcr_inputs import cluster_pool
from toolaudit.datasets._tcr_shortcut import _cell_examples
from toolaudit.stats import auroc
from toolaudit.traces import Example


def _labels(total: int, positives: int, rng: np.random.Generator) -> np.ndarray:
    y = np.zeros(total, dtype=np.int64)
    y[:positives] = 1
    return rng.permutation(y)


def _lookup_scores(train_ids: list[str], train_y: np.ndarray, ids: list[str], k: int) -> np.ndarray:
    """Binder rate per k-character prefix learned on train (smoothed toward the prior)."""
    hits: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0])
    for pdb, y in zip(train_ids, train_y.tolist(), strict=True):
        hits[pdb[:k]][0] += y
        hits[pdb[:k]][1] += 1
    prior = float(train_y.mean())
    return np.array([(hits[p[:k]][0] + prior) / (hits[p[:k]][1] + 1) for p in ids])


@pytest.mark.parametrize("seed", [0, 1])
def test_prefix_lookup_transfers_to_every_test_cluster_at_full_scale(seed: int) -> None:
    # The identifier process alone at the seed's Table 2 counts (no text rendering).
    rng = np.random.default_rng(seed)
    train = TCR_TABLE2[0]
    y_train = _labels(train.total, train.positives, rng)
    ids_train = sample_pdb_ids(rng, y_train, "C0")
    for cell in TCR_TABLE2[2:]:
        y = _labels(cell.total, cell.positives, rng)
        ids = sample_pdb_ids(rng, y, cell.group)
        one = auroc(y, _lookup_scores(ids_train, y_train, ids, 1))
        two = auroc(y, _lookup_scores(ids_train, y_train, ids, 2))
        # the seed's Table 6 (C1-C5 jointly): 1 digit 0.6725, 2 digits 0.6967
        assert 0.58 < one < 0.82, (cell.group, one)
        assert 0.6 < two < 0.85, (cell.group, two)
        assert abs(two - prefix_auroc(cell.group, chars=2)) < 0.07, cell.group


def test_prefix_auroc_is_well_above_chance_but_not_perfect() -> None:
    for group in ("C0", "C1", "C2", "C3", "C4", "C5"):
        assert 0.65 < prefix_auroc(group, chars=1) < prefix_auroc(group, chars=2) < 0.8


def test_ids_have_pdb_shape_and_suffix_is_uniform() -> None:
    rng = np.random.default_rng(0)
    y = _labels(4_000, 1_000, rng)
    ids = sample_pdb_ids(rng, y, "C0")
    assert all(len(i) == 4 and i[0] in "123456789" and i.isalnum() for i in ids)
    # the last two characters are drawn without the label: no lookup on them beats chance
    third = np.array([int(i[2], 36) for i in ids], dtype=float)
    assert abs(auroc(y, third) - 0.5) < 0.04


def _strip_id(e: Example) -> list[str]:
    return [t.content.replace(e.meta["pdb_id"], "<ID>") for t in e.tools]


def test_sections_are_identical_under_any_labelling_except_the_id() -> None:
    # Same input and tool streams, two different label streams: with the id masked,
    # every tool section (and the prompt) is the same text, so only the id sees the label.
    pool_rng = np.random.default_rng(5)
    pool = cluster_pool("C2", pool_rng)
    cell = plan_counts(scale=0.2)[3]

    def run(label_seed: int) -> list[Example]:
        rngs = {
            "labels": np.random.default_rng(label_seed),
            "ids": np.random.default_rng(1),
            "inputs": np.random.default_rng(2),
            "tools": np.random.default_rng(3),
        }
        return list(_cell_examples(cell, rngs, pool))

    a, b = run(100), run(200)
    assert [e.label for e in a] != [e.label for e in b]
    assert [_strip_id(e) for e in a] == [_strip_id(e) for e in b]
    assert [e.fields for e in a] == [e.fields for e in b]


@pytest.fixture(scope="module")
def c0_examples() -> list[Example]:
    return [e for e in make_tcr_shortcut(scale=0.1, seed=0) if e.group == "C0"]


def _cv_auroc(texts: list[str], y: np.ndarray) -> float:
    """Out-of-fold AUROC of the seed's PT2D classifier (char_wb 3-5, balanced LR). The
    unsupervised TF-IDF is fit once on all texts (it never sees labels); the LR is
    cross-validated."""
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import StratifiedKFold, cross_val_predict

    features = TfidfVectorizer(
        analyzer="char_wb", ngram_range=(3, 5), min_df=3, max_features=50_000
    ).fit_transform(texts)
    model = LogisticRegression(C=1.0, solver="liblinear", class_weight="balanced", max_iter=4000)
    folds = StratifiedKFold(3, shuffle=True, random_state=0)
    scores = cross_val_predict(model, features, y, cv=folds, method="decision_function")
    return auroc(y, scores)


def test_tool_text_without_the_id_carries_no_label_signal(c0_examples: list[Example]) -> None:
    # Within one cluster (peptides are cluster-specific, and positive rates differ
    # between clusters by design, so pooling clusters would confound).
    y = np.array([e.label for e in c0_examples])
    tool1 = [e.tools[0].content for e in c0_examples]
    tool3 = [_strip_id(e)[2] for e in c0_examples]
    id_only = [f"ThermoMPNN_inference_{e.meta['pdb_id']}.csv" for e in c0_examples]
    assert abs(_cv_auroc(tool1, y) - 0.5) < 0.08
    assert abs(_cv_auroc(tool3, y) - 0.5) < 0.08
    assert _cv_auroc(id_only, y) > 0.65


def test_strength_zero_plants_no_shortcut() -> None:
    rng = np.random.default_rng(0)
    y = _labels(4_000, 1_000, rng)
    ids = sample_pdb_ids(rng, y, "C0", strength=0.0)
    first = np.array([int(i[0]) for i in ids], dtype=float)
    assert abs(auroc(y, first) - 0.5) < 0.04
    assert abs(prefix_auroc("C4", chars=2, strength=0.0) - 0.5) < 1e-9
    assert prefix_auroc("C4", chars=2, strength=3.0) > prefix_auroc("C4", chars=2)


def test_decoy_ids_never_contain_a_row_id_nor_look_like_one() -> None:
    from toolaudit.datasets._identifiers import sample_decoy_ids
    from toolaudit.tokens import DETECTORS

    rng = np.random.default_rng(3)
    decoys = sample_decoy_ids(rng, 5_000)
    ids = set(sample_pdb_ids(rng, _labels(5_000, 1_000, rng), "C0"))
    assert all(len(d) == 5 and d[:2] in {b.prefix for b in BATCHES} for d in decoys)
    assert not any(d[k : k + 4] in ids for d in decoys for k in (0, 1))
    assert not any(DETECTORS["pdb_id"].search(f"reference_complexes: {d}") for d in decoys)

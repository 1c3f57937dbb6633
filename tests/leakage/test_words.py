"""The corpus in word space: bags, sequences, per-word n-grams and scope counts."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.feature_extraction.text import CountVectorizer

from toolaudit.leakage import FEATURE_SETS, PT2DEngine
from toolaudit.leakage._words import CorpusSpec, WordCorpus


def _triplets(mat: sp.csr_matrix, names: list[str]) -> set[tuple[int, str, int]]:
    coo = sp.coo_matrix(mat)
    return {
        (int(r), names[int(c)], int(v)) for r, c, v in zip(coo.row, coo.col, coo.data, strict=True)
    }


def test_word_corpus_keeps_sequences_and_bags():
    corpus = WordCorpus({"a": ["B a b", "", "c"], "b": ["a  A\tz", "q", " "]}, CorpusSpec())
    assert corpus.word_list == ["b", "a", "c", "z", "q"]
    assert corpus.seq["a"].tolist() == [0, 1, 0, 2]
    assert corpus.ptr["a"].tolist() == [0, 3, 3, 4]
    bag = corpus.scope_bag(["a", "b"]).toarray()
    assert bag.tolist() == [[2, 3, 0, 1, 0], [0, 0, 0, 0, 1], [0, 0, 1, 0, 0]]


@pytest.mark.parametrize("name", list(FEATURE_SETS))
@pytest.mark.parametrize("tools", [None, ["t2"], ["t1", "t3"], ["t0", "t1", "t2", "t3"]])
def test_scope_counts_equal_countvectorizer(adversarial, name, tools):
    """A scope's counts, composed from its rows' words, equal CountVectorizer's on the
    joined text (unicode, odd whitespace, empty sections, bigrams across sections)."""
    spec = FEATURE_SETS[name]
    engine = PT2DEngine(adversarial, [spec])
    scope = list(engine.tools) if tools is None else tools
    rows = np.arange(len(adversarial))
    counts, ids = engine.counts(spec.analyzer, scope).count_matrix(rows)
    vec = CountVectorizer(analyzer=spec.analyzer, ngram_range=spec.ngram_range)
    ref = vec.fit_transform([e.trace(tools=tools) for e in adversarial])
    names = engine.terms(spec.analyzer, ids)
    ours = _triplets(counts, names)
    lo, hi = spec.ngram_range
    if spec.analyzer == "char_wb":  # the corpus counts 2-5 when both char sets are asked
        ours = {t for t in ours if lo <= len(t[1]) <= hi}
    assert ours == _triplets(ref, vec.get_feature_names_out().tolist())


def test_word_ids_register_new_words_with_their_ngrams():
    corpus = WordCorpus({"a": ["alpha beta"]}, CorpusSpec(word_max_n=2, char_range=(3, 5)))
    before = corpus.n_words
    ids = corpus.word_ids(["beta", "alphabeta", "alphabeta"])
    assert ids.tolist() == [1, before, before]
    assert corpus.word_list[before] == "alphabeta"
    ng = corpus.per_word("char_wb")
    assert ng.shape[0] == corpus.n_words
    grams = corpus.term_strings("char_wb", ng[before].indices)
    assert " al" in grams and "abeta" in grams
    tok = corpus.per_word("word")
    assert corpus.term_strings("word", tok[before].indices) == ["alphabeta"]


def test_words_with_characters_outside_the_corpus_are_refused():
    corpus = WordCorpus({"a": ["abc"]}, CorpusSpec(word_max_n=0, char_range=(3, 5)))
    with pytest.raises(ValueError, match="characters absent"):
        corpus.word_ids(["zzz"])

"""Engine plumbing: tool columns, parallel fits, packed n-gram keys."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from toolaudit.leakage import LRSpec
from toolaudit.leakage._engine import ToolColumns
from toolaudit.leakage._fits import run_jobs
from toolaudit.leakage._ngrams import CharCodebook
from toolaudit.traces import Example, ToolSection


def _ex(secs):
    return Example(
        id="x", label=0, group="g", tools=[ToolSection(name=n, content=c) for n, c in secs]
    )


def test_tool_columns_join_repeated_tools_and_count_missing():
    cols = ToolColumns.from_examples([_ex([("a", "1"), ("a", "2"), ("b", "3")]), _ex([("a", "4")])])
    assert cols.order == ("a", "b")
    assert cols.texts["a"] == ["1\n2", "4"] and cols.texts["b"] == ["3", ""]
    assert cols.missing == {"a": 0, "b": 1}
    assert cols.canonical


def test_tool_columns_detect_interleaving():
    cols = ToolColumns.from_examples([_ex([("a", "1"), ("b", "2"), ("a", "3")])])
    assert not cols.canonical


@pytest.mark.parametrize("backend", ["threading", "loky"])
def test_run_jobs_parallel_equals_sequential(backend):
    rng = np.random.default_rng(0)
    x = sp.random(200, 40, density=0.3, random_state=1, format="csr")
    y = (rng.random(200) < 0.4).astype(int)
    jobs = [(i, (x[i * 10 :], y[i * 10 :], x, 2)) for i in range(4)]
    seq = run_jobs(iter(jobs), LRSpec(), n_jobs=1)
    par = run_jobs(iter(jobs), LRSpec(), n_jobs=2, backend=backend)
    assert [t for t, _ in par] == [0, 1, 2, 3]
    for (_, a), (_, b) in zip(seq, par, strict=True):
        assert np.array_equal(a.scores, b.scores) and a.top_pos == b.top_pos


def test_run_jobs_in_threads_raises_a_failed_fit():
    rng = np.random.default_rng(0)
    x = sp.random(200, 40, density=0.3, random_state=1, format="csr")
    y = (rng.random(200) < 0.4).astype(int)
    built: list[int] = []

    def jobs():
        for i in range(4):
            built.append(i)
            # job 2's labels do not match its rows
            yield i, (x[i * 10 :], y[i * 10 :] if i != 2 else y[:3], x, 2)

    with pytest.raises(ValueError, match="broadcast"):
        run_jobs(jobs(), LRSpec(), n_jobs=-1)
    assert built[:3] == [0, 1, 2]


def test_codebook_keys_sort_like_strings_and_decode():
    words = ["b", "ab", "a", "ba", "é", " a", "a "]
    present = CharCodebook.scan(words)
    book = CharCodebook(present, max_n=5)
    keys = []
    for w in words:
        codes = [int(book.codes[ord(c)]) for c in w]
        keys.append(sum(c * int(p) for c, p in zip(codes, book.powers, strict=False)))
    order = np.argsort(keys)
    assert [words[i] for i in order] == sorted(words)
    assert book.decode(np.array(keys)) == words
    assert book.lengths(np.array(keys)).tolist() == [len(w) for w in words]


def test_run_jobs_unknown_backend_is_a_config_error():
    from toolaudit.errors import ConfigError

    x = sp.random(20, 5, density=0.5, random_state=1, format="csr")
    y = np.arange(20) % 2
    with pytest.raises(ConfigError, match="invalid backend='nope'"):
        run_jobs(iter([(0, (x, y, x, 0))]), LRSpec(), n_jobs=2, backend="nope")

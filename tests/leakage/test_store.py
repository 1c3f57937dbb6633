"""The on-disk section store and the lazily built eval matrix change no number."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from toolaudit.leakage import FEATURE_SETS, PT2DEngine
from toolaudit.leakage._engine import EvalMatrix
from toolaudit.leakage._store import SectionStore


def _random_csr(seed: int, shape: tuple[int, int] = (40, 25)) -> sp.csr_matrix:
    rng = np.random.default_rng(seed)
    dense = rng.integers(0, 4, size=shape) * (rng.random(shape) < 0.3)
    dense[7] = 0  # an empty row
    return sp.csr_matrix(dense.astype(np.int32))


def test_section_store_round_trips_and_reads_row_subsets(tmp_path) -> None:
    store = SectionStore(tmp_path)
    mat = _random_csr(0)
    store["a"] = mat
    back = store["a"]
    assert back.dtype == np.int32 and back.shape == mat.shape
    assert (back != mat).nnz == 0
    for idx in ([0, 1, 2, 10, 11, 30], [7], [39, 3, 4, 5], list(range(40)), []):
        rows = np.asarray(idx, dtype=np.int64)
        got = store.rows("a", rows)
        assert got.shape == (len(idx), 25)
        assert (got != mat[rows]).nnz == 0
    assert (store.shape("a"), store.nnz("a")) == (mat.shape, mat.nnz)


def test_section_store_pop_deletes_files_and_close_removes_folder(tmp_path) -> None:
    store = SectionStore(tmp_path)
    store["a"] = _random_csr(1)
    store["b"] = _random_csr(2)
    store.pop("a")
    store["c"] = _random_csr(3)  # a new file after a pop never overwrites "b"
    assert list(store) == ["b", "c"] and "a" not in store
    assert (store["b"] != _random_csr(2)).nnz == 0
    assert len(list(store.path.iterdir())) == 6  # three arrays per matrix
    store.close()
    assert not store.path.exists()


def test_lazy_eval_matrix_equals_the_eager_one(adversarial) -> None:
    spec = FEATURE_SETS["char_wb_3_5"]
    engine = PT2DEngine(adversarial, [spec])
    fit = np.array([i for i, e in enumerate(adversarial) if e.split == "train"])
    ev = np.array([i for i, e in enumerate(adversarial) if e.split == "test"])
    counts = engine.counts(spec.analyzer, list(engine.tools))
    eager = engine.design(counts, spec, fit, ev)
    lazy = engine.design(counts, spec, fit, ev, lazy_eval=True)
    assert isinstance(lazy.x_eval, EvalMatrix) and lazy.x_eval.n_rows == ev.size
    assert abs(lazy.x_eval() - eager.x_eval).max() == 0
    assert abs(lazy.x_fit - eager.x_fit).max() == 0


def test_blocked_design_matches_scikit_learn_across_many_blocks(adversarial, monkeypatch) -> None:
    from toolaudit.leakage import LRSpec, _engine, _features
    from toolaudit.leakage._reference import reference_fit

    monkeypatch.setattr(_engine, "BLOCK_ROWS", 7)  # 90 rows: 13 blocks per pass
    monkeypatch.setattr(_features, "_STEP_NNZ", 50)
    fit = np.array([i for i, e in enumerate(adversarial) if e.split == "train"])
    ev = np.array([i for i, e in enumerate(adversarial) if e.split == "test"])
    for name in FEATURE_SETS:
        spec = FEATURE_SETS[name]
        engine = PT2DEngine(adversarial, [spec])
        counts = engine.counts(spec.analyzer, list(engine.tools))
        design = engine.design(counts, spec, fit, ev, lazy_eval=True)
        ref = reference_fit(adversarial, None, spec, LRSpec(), fit, ev)
        assert engine.terms(spec.analyzer, design.vocab) == ref.vocabulary
        ref_fit = ref.x_fit.copy()
        ref_fit.sort_indices()
        assert abs(design.x_fit - ref_fit).max() <= 1e-12
        assert abs(design.x_eval() - ref.x_eval).max() <= 1e-12


def test_return_freed_memory_sets_the_glibc_threshold() -> None:
    import platform

    import pytest

    from toolaudit.leakage._store import return_freed_memory

    if platform.libc_ver()[0] != "glibc":
        pytest.skip("mallopt is glibc's")
    assert return_freed_memory() is True


def test_section_store_write_rows_round_trips_block_by_block(tmp_path) -> None:
    store = SectionStore(tmp_path)
    mat = _random_csr(4)
    cuts = [0, 5, 5, 6, 19, 40]  # an empty block, a one-row block, uneven sizes
    blocks = (mat[a:b] for a, b in zip(cuts[:-1], cuts[1:], strict=True))
    store.write_rows("a", blocks, n_cols=30)  # wider than the blocks
    back = store["a"]
    assert back.shape == (40, 30) and store.nnz("a") == mat.nnz
    assert back.dtype == np.int32 and back.indices.dtype == np.int32
    assert (back[:, :25] != mat).nnz == 0 and back[:, 25:].nnz == 0
    rows = np.array([39, 7, 0, 6], dtype=np.int64)
    assert (store.rows("a", rows)[:, :25] != mat[rows]).nnz == 0
    # the .npy files are ordinary arrays (the header was rewritten with the length)
    file = store._files["a"]
    assert np.load(f"{file}.data.npy").shape == (mat.nnz,)
    assert np.load(f"{file}.indptr.npy").tolist() == mat.indptr.tolist()
    store.write_rows("empty", iter(()), n_cols=3)
    assert store["empty"].shape == (0, 3) and store.nnz("empty") == 0


def test_section_store_write_rows_may_read_the_matrix_it_replaces(tmp_path) -> None:
    store = SectionStore(tmp_path)
    mat = _random_csr(5)
    store["a"] = mat
    idx = [np.arange(a, min(a + 8, 40)) for a in range(0, 40, 8)]
    store.write_rows("a", (store.rows("a", i) * 2 for i in idx), n_cols=25)
    assert (store["a"] != mat * 2).nnz == 0
    assert len(list(store.path.iterdir())) == 3  # the old files are gone

    def failing():
        yield store.rows("a", idx[0])
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError, match="boom"):
        store.write_rows("a", failing(), n_cols=25)
    assert (store["a"] != mat * 2).nnz == 0  # unchanged, no partial files left
    assert len(list(store.path.iterdir())) == 3


def test_restricted_with_its_count_equals_without_and_survives_a_wrong_count(
    adversarial, monkeypatch
) -> None:
    from toolaudit.leakage import _engine

    monkeypatch.setattr(_engine, "BLOCK_ROWS", 7)  # many blocks copied in one by one
    spec = FEATURE_SETS["char_wb_3_5"]
    engine = PT2DEngine(adversarial, [spec])
    counts = engine.counts(spec.analyzer, list(engine.tools))
    rows = np.array([i for i, e in enumerate(adversarial) if e.split == "train"])
    df, _ = counts.term_stats(rows)
    vocab = np.flatnonzero(df >= 2)
    plain = counts.restricted(rows, vocab)
    assert plain.nnz == int(df[vocab].sum())  # the count the design passes
    for nnz in (plain.nnz, plain.nnz - 5, plain.nnz + 5, 0):
        got = counts.restricted(rows, vocab, nnz=nnz)
        assert got.nnz == plain.nnz and got.data.size == plain.nnz
        assert (got != plain).nnz == 0


def test_eval_matrix_blocks_stack_to_the_whole_and_score_the_same(adversarial, monkeypatch):
    from toolaudit.leakage import LRSpec, _engine
    from toolaudit.leakage._features import fit_and_score

    monkeypatch.setattr(_engine, "BLOCK_ROWS", 7)
    spec = FEATURE_SETS["char_wb_2_5"]
    engine = PT2DEngine(adversarial, [spec])
    y = np.array([e.label for e in adversarial])
    fit = np.array([i for i, e in enumerate(adversarial) if e.split == "train"])
    ev = np.array([i for i, e in enumerate(adversarial) if e.split == "test"])
    counts = engine.counts(spec.analyzer, list(engine.tools))
    lazy = engine.design(counts, spec, fit, ev, lazy_eval=True)
    assert isinstance(lazy.x_eval, EvalMatrix)
    blocks = list(lazy.x_eval.blocks())
    assert len(blocks) == -(-ev.size // 7)
    assert abs(sp.vstack(blocks) - lazy.x_eval()).max() == 0
    by_blocks = fit_and_score(lazy.x_fit, y[fit], lazy.x_eval, LRSpec()).scores
    whole = fit_and_score(lazy.x_fit, y[fit], lazy.x_eval(), LRSpec()).scores
    np.testing.assert_array_equal(by_blocks, whole)


@pytest.mark.parametrize("n_jobs", [1, 2])
def test_a_finished_jobs_design_is_freed_before_the_next_is_built(n_jobs) -> None:
    """joblib keeps a finished job's arguments until it fetches the next job; the
    matrices must not stay alive through that reference while the next design is built."""
    import gc
    import weakref

    from toolaudit.leakage import LRSpec
    from toolaudit.leakage._engine import run_jobs

    rng = np.random.default_rng(0)
    y = (rng.random(60) < 0.4).astype(int)
    refs: list[weakref.ref[sp.csr_matrix]] = []
    alive_when_building: list[int] = []

    def jobs():
        for i in range(4):
            gc.collect()
            alive_when_building.append(sum(r() is not None for r in refs))
            x = sp.random(60, 30, density=0.3, format="csr", random_state=i)
            refs.append(weakref.ref(x))
            yield i, (x, y, x[:5], 0)
            del x

    out = run_jobs(jobs(), LRSpec(), n_jobs=n_jobs)
    assert [tag for tag, _ in out] == [0, 1, 2, 3]
    # one design at a time per worker: n_jobs designs may be in flight, never more
    assert max(alive_when_building) <= n_jobs - 1

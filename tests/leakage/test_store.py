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

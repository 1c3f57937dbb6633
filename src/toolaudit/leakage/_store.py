"""Per-section count matrices kept on disk, one loaded at a time.

At the seed's size the per-section count matrices of both analyzers take about 2 GB
(char_wb 2-5 alone ~225M non-zeros); held in memory next to a full-trace design matrix
and liblinear's copy of it, they were the largest constant part of the audit's peak.
``SectionStore`` writes each matrix as three ``.npy`` files in a private temporary
folder and reads it back on demand (whole, or only some rows through a short-lived
memory map), so a scope is composed from one section at a time and the page cache, not
the process, holds the rest. The folder is removed when the store is garbage-collected or the
process exits.
"""

from __future__ import annotations

import ctypes
import logging
import os
import shutil
import tempfile
import weakref
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp

logger = logging.getLogger(__name__)

#: Environment variable naming the folder for the spilled count matrices
#: (default: the system's temporary folder).
TMPDIR_ENV = "TOOLAUDIT_TMPDIR"

_INT32_MAX = int(np.iinfo(np.int32).max)
#: A 1-D array's ``.npy`` header (format 1.0) is 128 bytes for any length up to 2**63:
#: written first for the largest length, it is rewritten in place once the length is known.
_PLACEHOLDER_LEN = 2**63 - 1


def _write_header(fp: Any, dtype: np.dtype[Any], length: int) -> int:
    header = {
        "descr": np.lib.format.dtype_to_descr(dtype),
        "fortran_order": False,
        "shape": (int(length),),
    }
    start = fp.tell()
    np.lib.format.write_array_header_1_0(fp, header)
    return int(fp.tell() - start)


class _ArrayWriter:
    """A 1-D ``.npy`` file written in pieces: a placeholder header, the raw pieces, then
    the header rewritten in place with the final length."""

    def __init__(self, path: str, dtype: np.dtype[Any]) -> None:
        self.dtype = dtype
        self.length = 0
        self._fp = open(path, "wb")  # noqa: SIM115 (closed by finish/abort)
        self._header_len = _write_header(self._fp, dtype, _PLACEHOLDER_LEN)

    def write(self, arr: np.ndarray) -> None:
        arr = np.ascontiguousarray(arr, dtype=self.dtype)
        arr.tofile(self._fp)
        self.length += int(arr.size)

    def finish(self) -> None:
        self._fp.seek(0)
        if _write_header(self._fp, self.dtype, self.length) != self._header_len:
            raise RuntimeError("npy header length changed")  # not for 1-D arrays, see above
        self._fp.close()

    def abort(self) -> None:
        self._fp.close()


class SectionStore:
    """A mapping ``name -> csr_matrix`` whose values live on disk.

    ``store[name] = mat`` writes the matrix, ``store[name]`` reads a fresh copy,
    ``store.pop(name)`` deletes the file. Iteration yields names in insertion order.

    >>> store = SectionStore()
    >>> store["a"] = sp.csr_matrix(np.eye(2, dtype=np.int32))
    >>> int(store["a"].sum()), list(store), store.nnz("a")
    (2, ['a'], 2)
    """

    def __init__(self, directory: str | os.PathLike[str] | None = None) -> None:
        base = directory if directory is not None else os.environ.get(TMPDIR_ENV) or None
        self.path = Path(tempfile.mkdtemp(prefix="toolaudit-pt2d-", dir=base))
        self._files: dict[str, Path] = {}
        self._arrays: dict[str, Path] = {}
        self._next = 0  # file numbers are never reused, even after a pop
        self._meta: dict[str, tuple[tuple[int, int], int]] = {}
        self._finalizer = weakref.finalize(self, shutil.rmtree, str(self.path), True)

    def __setitem__(self, name: str, mat: sp.csr_matrix) -> None:
        mat = sp.csr_matrix(mat)
        if not mat.has_sorted_indices:
            mat.sort_indices()
        file = self._files.get(name)
        if file is None:
            file = self.path / f"m{self._next:06d}"
            self._next += 1
        for part in ("data", "indices", "indptr"):
            np.save(f"{file}.{part}.npy", getattr(mat, part))
        self._files[name] = file
        self._meta[name] = ((int(mat.shape[0]), int(mat.shape[1])), int(mat.nnz))

    def __getitem__(self, name: str) -> sp.csr_matrix:
        file = self._files[name]  # KeyError for an unknown or dropped section
        arrays = [np.load(f"{file}.{part}.npy") for part in ("data", "indices", "indptr")]
        mat = sp.csr_matrix(tuple(arrays), shape=self._meta[name][0])
        mat.has_sorted_indices = True
        return mat

    def rows(self, name: str, idx: np.ndarray) -> sp.csr_matrix:
        """Rows ``idx`` of a stored matrix, reading only those rows' entries (the files
        are memory-mapped for the copy and unmapped afterwards)."""
        file = self._files[name]
        data = np.load(f"{file}.data.npy", mmap_mode="r")
        indices = np.load(f"{file}.indices.npy", mmap_mode="r")
        indptr = np.load(f"{file}.indptr.npy")
        idx = np.asarray(idx, dtype=np.int64)
        starts, ends = indptr[idx], indptr[idx + 1]
        lens = ends - starts
        out_ptr = np.zeros(idx.size + 1, dtype=np.int64)
        np.cumsum(lens, out=out_ptr[1:])
        out_data = np.empty(int(out_ptr[-1]), dtype=data.dtype)
        out_idx = np.empty(int(out_ptr[-1]), dtype=indices.dtype)
        # copy runs of consecutive rows as one slice (few runs: splits are row blocks)
        brk = np.flatnonzero(np.diff(idx) != 1) + 1
        run_start = np.concatenate([[0], brk])
        run_end = np.concatenate([brk, [idx.size]])
        for a, b in zip(run_start.tolist(), run_end.tolist(), strict=True):
            if a == b:
                continue
            src0, src1 = int(starts[a]), int(ends[b - 1])
            dst0 = int(out_ptr[a])
            out_data[dst0 : dst0 + src1 - src0] = data[src0:src1]
            out_idx[dst0 : dst0 + src1 - src0] = indices[src0:src1]
        del data, indices
        mat = sp.csr_matrix((out_data, out_idx, out_ptr), shape=(idx.size, self._meta[name][0][1]))
        mat.has_sorted_indices = True
        return mat

    def write_rows(self, name: str, blocks: Iterable[sp.csr_matrix], *, n_cols: int) -> None:
        """Store the matrix made of ``blocks`` stacked (consecutive row blocks, each with
        ``n_cols`` columns or fewer), holding one block in memory at a time.

        Data and indices are streamed to their files as each block arrives; only the
        row pointers (one integer per row) are kept until the end. The blocks may read
        the matrix being replaced (``store.rows(name, ...)``): the new files replace the
        old ones only after the last block, and an error leaves the old matrix in place.
        The result equals ``store[name] = sp.vstack(blocks)`` (canonical, sorted).

        >>> store = SectionStore()
        >>> m = sp.csr_matrix(np.arange(6, dtype=np.int32).reshape(3, 2))
        >>> store.write_rows("m", (m[i : i + 2] for i in (0, 2)), n_cols=2)
        >>> store["m"].toarray().tolist(), store.nnz("m")
        ([[0, 1], [2, 3], [4, 5]], 5)
        """
        file = self.path / f"m{self._next:06d}"
        self._next += 1
        writers: dict[str, _ArrayWriter] = {}
        ptrs: list[np.ndarray] = []
        n_rows = 0
        try:
            for block in blocks:
                mat = sp.csr_matrix(block)
                if mat.shape[1] > n_cols:
                    raise ValueError(f"a block has {mat.shape[1]} columns, more than {n_cols}")
                mat.sum_duplicates()  # canonical: sorted indices, no duplicates
                if not writers:
                    writers = {
                        "data": _ArrayWriter(f"{file}.data.npy", mat.data.dtype),
                        "indices": _ArrayWriter(f"{file}.indices.npy", mat.indices.dtype),
                    }
                ptrs.append(mat.indptr[1:].astype(np.int64) + writers["data"].length)
                writers["data"].write(mat.data)
                writers["indices"].write(mat.indices)
                n_rows += int(mat.shape[0])
                del mat
            if not writers:  # no block: an empty matrix
                writers = {
                    "data": _ArrayWriter(f"{file}.data.npy", np.dtype(np.int32)),
                    "indices": _ArrayWriter(f"{file}.indices.npy", np.dtype(np.int32)),
                }
            nnz = writers["data"].length
            for writer in writers.values():
                writer.finish()
            # the row pointers' type as scipy would choose it for the whole matrix
            small = nnz <= _INT32_MAX and writers["indices"].dtype == np.int32
            indptr = np.concatenate([np.zeros(1, np.int64), *ptrs])
            np.save(f"{file}.indptr.npy", indptr.astype(np.int32 if small else np.int64))
        except BaseException:
            for writer in writers.values():
                writer.abort()
            for part in ("data", "indices", "indptr"):
                Path(f"{file}.{part}.npy").unlink(missing_ok=True)
            raise
        old = self._files.get(name)
        if old is not None:
            for part in ("data", "indices", "indptr"):
                Path(f"{old}.{part}.npy").unlink(missing_ok=True)
        self._files[name] = file
        self._meta[name] = ((n_rows, int(n_cols)), int(nnz))

    def put_array(self, name: str, arr: np.ndarray) -> None:
        """Keep a plain array on disk under ``name`` (read back with ``pop_array``)."""
        file = self.path / f"a{self._next:06d}.npy"
        self._next += 1
        np.save(file, arr)
        self._arrays[name] = file

    def pop_array(self, name: str) -> np.ndarray:
        """Read an array stored with ``put_array`` and delete its file."""
        file = self._arrays.pop(name)
        arr: np.ndarray = np.load(file)
        file.unlink(missing_ok=True)
        return arr

    def array(self, name: str) -> np.ndarray:
        """A plain array stored with ``put_array``, memory-mapped read-only (kept)."""
        arr: np.ndarray = np.load(self._arrays[name], mmap_mode="r")
        return arr

    def drop_array(self, name: str) -> None:
        """Delete a plain array's file (no error when absent)."""
        file = self._arrays.pop(name, None)
        if file is not None:
            file.unlink(missing_ok=True)

    def __contains__(self, name: object) -> bool:
        return name in self._files

    def __iter__(self) -> Iterator[str]:
        return iter(list(self._files))

    def __len__(self) -> int:
        return len(self._files)

    def pop(self, name: str, default: object = None) -> object:
        """Forget ``name`` and delete its file (returns ``default``, never the matrix)."""
        file = self._files.pop(name, None)
        self._meta.pop(name, None)
        if file is not None:
            for part in ("data", "indices", "indptr"):
                Path(f"{file}.{part}.npy").unlink(missing_ok=True)
        return default

    def shape(self, name: str) -> tuple[int, int]:
        """Shape of a stored matrix, without reading it."""
        return self._meta[name][0]

    def nnz(self, name: str) -> int:
        """Stored non-zeros of a matrix, without reading it."""
        return self._meta[name][1]

    def close(self) -> None:
        """Delete every file and the folder now."""
        self._files.clear()
        self._arrays.clear()
        self._meta.clear()
        self._finalizer()


_M_MMAP_THRESHOLD = -3  # glibc's mallopt parameter number (malloc.h)


def return_freed_memory(threshold: int = 1 << 20) -> bool:
    """Make glibc serve every allocation of ``threshold`` bytes or more with its own
    memory map, and keep that threshold fixed, so a freed numpy array goes back to the
    system at once. By default glibc raises the threshold after each large free (up to
    32 MB), and the audit's many short-lived block arrays then stay resident: at scale
    0.15 the audit idled at 0.69 GB with the default and at 0.27 GB with this. A
    process-wide setting, applied by the ``leakage`` command; returns False (and does
    nothing) where the C library is not glibc."""
    try:
        libc = ctypes.CDLL("libc.so.6")
        return bool(libc.mallopt(_M_MMAP_THRESHOLD, int(threshold)))
    except (OSError, AttributeError):
        return False

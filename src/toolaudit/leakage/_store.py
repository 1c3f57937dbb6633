"""Per-section count matrices kept on disk, one loaded at a time.

At the seed's size the per-section count matrices of both analyzers take about 2 GB
(char_wb 2-5 alone ~225M non-zeros); held in memory next to a full-trace design matrix
and liblinear's copy of it, they were the largest constant part of the audit's peak.
``SectionStore`` writes each matrix to an uncompressed ``.npz`` file in a private
temporary folder and reads it back on demand into ordinary (anonymous) memory, so a
scope is composed from one section at a time and the page cache, not the process,
holds the rest. The folder is removed when the store is garbage-collected or the
process exits.
"""

from __future__ import annotations

import logging
import os
import shutil
import tempfile
import weakref
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import scipy.sparse as sp

logger = logging.getLogger(__name__)

#: Environment variable naming the folder for the spilled count matrices
#: (default: the system's temporary folder).
TMPDIR_ENV = "TOOLAUDIT_TMPDIR"


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
        self._next = 0  # file numbers are never reused, even after a pop
        self._meta: dict[str, tuple[tuple[int, int], int]] = {}
        self._finalizer = weakref.finalize(self, shutil.rmtree, str(self.path), True)

    def __setitem__(self, name: str, mat: sp.csr_matrix) -> None:
        mat = sp.csr_matrix(mat)
        file = self._files.get(name)
        if file is None:
            file = self.path / f"m{self._next:06d}.npz"
            self._next += 1
        with file.open("wb") as fh:
            np.savez(
                fh,
                data=mat.data,
                indices=mat.indices,
                indptr=mat.indptr,
                shape=np.asarray(mat.shape, dtype=np.int64),
                sorted=np.asarray(bool(mat.has_sorted_indices)),
            )
        self._files[name] = file
        self._meta[name] = ((int(mat.shape[0]), int(mat.shape[1])), int(mat.nnz))

    def __getitem__(self, name: str) -> sp.csr_matrix:
        file = self._files[name]  # KeyError for an unknown or dropped section
        with np.load(file) as z:
            shape = tuple(int(v) for v in z["shape"])
            mat = sp.csr_matrix((z["data"], z["indices"], z["indptr"]), shape=shape)
            mat.has_sorted_indices = bool(z["sorted"])
        return mat

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
            file.unlink(missing_ok=True)
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
        self._meta.clear()
        self._finalizer()

"""What the audit holds in memory: one design per worker, freed arrays handed back."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp


def test_return_freed_memory_sets_the_glibc_threshold() -> None:
    import platform

    from toolaudit.leakage._memory import return_freed_memory

    if platform.libc_ver()[0] != "glibc":
        pytest.skip("mallopt is glibc's")
    assert return_freed_memory() is True


@pytest.mark.parametrize("n_jobs", [1, 2])
def test_a_finished_jobs_design_is_freed_before_the_next_is_built(n_jobs) -> None:
    """joblib keeps a finished job's arguments until it fetches the next job; the
    matrices must not stay alive through that reference while the next design is built."""
    import gc
    import weakref

    from toolaudit.leakage import LRSpec
    from toolaudit.leakage._fits import run_jobs

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

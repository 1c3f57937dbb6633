"""Scale-out on Dask ``distributed``: the fits and dilution sweeps as cluster tasks.

``--scheduler local`` starts a ``LocalCluster`` for the run; ``--scheduler ADDRESS``
(``tcp://host:8786``) connects to a running scheduler. Every fit is a pure function of
its design matrices, labels and the (seeded) classifier settings, so the results are
identical to the in-process run wherever a task lands. ``distributed`` is an optional
extra: ``pip install 'toolaudit[dask]'``.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from toolaudit.errors import ConfigError, MissingDependencyError

logger = logging.getLogger(__name__)

#: joblib backends that run on this machine (a cluster goes through ``--scheduler``).
#: ``multiprocessing`` is not one: joblib's pool cannot hand results back as a generator
#: (the fits are consumed lazily so only a few designs exist at once), and its forked
#: workers would inherit the parent's OpenMP runtime, which GNU OpenMP does not allow.
LOCAL_BACKENDS = ("threading", "loky", "sequential")


def check_backend(backend: str | None) -> None:
    """Reject a joblib backend that is not a local one (dask/ray used to fail late)."""
    if backend is not None and backend not in LOCAL_BACKENDS:
        hints = {
            "dask": "; for a Dask cluster use --scheduler ADDRESS|local",
            "multiprocessing": "; use loky for worker processes",
        }
        hint = hints.get(backend, "")
        raise ConfigError.invalid("backend", LOCAL_BACKENDS, backend + hint if hint else backend)


def require_distributed() -> Any:
    try:
        import distributed
    except ImportError:
        raise MissingDependencyError("distributed", "dask") from None
    return distributed


@contextmanager
def dask_client(
    scheduler: str | None, *, n_workers: int = 2, timeout_s: float = 10.0
) -> Iterator[Any]:
    """A ``distributed.Client`` for ``scheduler`` (None yields None: run in process).

    ``local`` starts an in-process ``LocalCluster`` with ``n_workers`` single-threaded
    workers (liblinear releases the GIL, so threads run fits in parallel).
    """
    if scheduler is None:
        yield None
        return
    dist = require_distributed()
    # distributed's loggers carry their own level (INFO) and handler: make them follow
    # the CLI's --log-level / -q, so a quiet run prints no cluster chatter
    level = logging.getLogger().getEffectiveLevel()
    for name in ("distributed", "dask"):
        logging.getLogger(name).setLevel(level)
    if scheduler == "local":
        with (
            dist.LocalCluster(
                n_workers=max(n_workers, 1),
                threads_per_worker=1,
                processes=False,
                # distributed starts an HTTP server on every scheduler and worker even
                # with the dashboard off (None: all interfaces); bind them to loopback
                dashboard_address="127.0.0.1:0",
                worker_dashboard_address="127.0.0.1:0",
            ) as cluster,
            dist.Client(cluster) as client,
        ):
            yield client
        return
    try:
        client = dist.Client(scheduler, timeout=timeout_s)
    except (OSError, TimeoutError, ValueError) as exc:
        raise ConfigError(
            f"invalid scheduler={scheduler!r}: cannot connect ({exc}); allowed: 'local' or "
            "the address of a running Dask scheduler, e.g. tcp://host:8786"
        ) from None
    with client:
        yield client


def run_on_client(
    client: Any, func: Any, calls: Iterator[tuple[Any, tuple[Any, ...]]], *, window: int
) -> Iterator[tuple[Any, Any]]:
    """Submit ``func(*args)`` for each ``(tag, args)`` with at most ``window`` tasks in
    flight (so only a few design matrices exist at once); yields ``(tag, result)`` in
    submission order."""
    dist = require_distributed()
    pending: list[tuple[Any, Any]] = []
    for n, (tag, args) in enumerate(calls):
        # large arrays travel as scattered data, not inside the task graph
        args = tuple(client.scatter(a, hash=False) if _large(a) else a for a in args)
        # distinct keys: equal inputs in two sweeps must not be merged into one task
        pending.append((tag, client.submit(func, *args, pure=False, key=f"pt2d-fit-{n}")))
        while len(pending) >= window:
            t, fut = pending.pop(0)
            yield t, fut.result()
            fut.release()
    dist.wait([f for _, f in pending])
    for t, fut in pending:
        yield t, fut.result()
        fut.release()


def _large(value: Any) -> bool:
    """An array (dense or sparse) of 1 MiB or more."""
    nbytes = getattr(value, "nbytes", None)
    if nbytes is None and hasattr(value, "data") and hasattr(value, "indices"):
        nbytes = value.data.nbytes + value.indices.nbytes  # scipy.sparse CSR/CSC
    return isinstance(nbytes, int) and nbytes >= 1 << 20

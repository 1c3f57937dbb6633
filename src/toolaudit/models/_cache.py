"""SQLite response cache (WAL mode) and the :class:`CachedModel` wrapper.

A response is keyed by the SHA-256 of (model identity, request kind, decoding
parameters, request text). Identical requests are sent to the model once, also within
one batch; finished work is committed chunk by chunk, so an interrupted run resumes
without repeating a call and an unchanged rerun makes zero model calls. Only hashes
and responses are stored, never the prompt text or any credential.
"""

from __future__ import annotations

import hashlib
import json
import logging
import sqlite3
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from toolaudit.errors import DataError
from toolaudit.models._base import ChatTurn, Generation, LanguageModel, ToolSpec, checked_logprobs

logger = logging.getLogger(__name__)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS responses (
    key TEXT PRIMARY KEY,
    identity TEXT NOT NULL,
    kind TEXT NOT NULL,
    value TEXT NOT NULL
)
"""


def request_key(identity: str, kind: str, params: dict[str, Any], payload: Any) -> str:
    """The cache key of one request (hex SHA-256 of a canonical JSON text)."""
    text = json.dumps([identity, kind, params, payload], sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class ResponseCache:
    """A key -> JSON value store in one SQLite file, safe for threads and processes."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None

    def _db(self) -> sqlite3.Connection:
        if self._conn is None:
            if self.path.is_dir():
                raise DataError(
                    f"{self.path}: --cache is a directory; give a SQLite file path "
                    "(it is created on first use)"
                )
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                conn = sqlite3.connect(str(self.path), timeout=60.0, check_same_thread=False)
                conn.execute("PRAGMA journal_mode=WAL")
                conn.execute("PRAGMA synchronous=NORMAL")
                conn.execute(_SCHEMA)
                conn.commit()
                columns = {row[1] for row in conn.execute("PRAGMA table_info(responses)")}
            except (sqlite3.DatabaseError, OSError) as exc:
                raise self._unusable(exc) from None
            if columns != {"key", "identity", "kind", "value"}:
                conn.close()
                raise self._unusable(f"its responses table has columns {sorted(columns)}")
            self._conn = conn
        return self._conn

    def _unusable(self, why: object) -> DataError:
        """The one-line error of a cache file that cannot be used (the run's other outputs
        are kept; removing the file makes the next run recompute)."""
        return DataError(
            f"{self.path}: not a usable SQLite response cache ({why}); give a new file path "
            "or remove this file"
        )

    def get_many(self, keys: Sequence[str]) -> dict[str, Any]:
        """Values found for ``keys`` (missing keys are absent from the result)."""
        found: dict[str, Any] = {}
        with self._lock:
            db = self._db()
            for start in range(0, len(keys), 500):
                chunk = list(keys[start : start + 500])
                marks = ",".join("?" * len(chunk))
                try:
                    rows = db.execute(
                        f"SELECT key, value FROM responses WHERE key IN ({marks})", chunk
                    ).fetchall()
                    found.update((k, json.loads(v)) for k, v in rows)
                except sqlite3.DatabaseError as exc:  # a corrupted page
                    raise self._unusable(exc) from None
                except (json.JSONDecodeError, TypeError) as exc:  # a value that is not JSON
                    raise self._unusable(f"a stored value is not JSON: {exc}") from None
        return found

    def put_many(self, identity: str, kind: str, items: Sequence[tuple[str, Any]]) -> None:
        """Store ``(key, value)`` pairs in one committed transaction."""
        with self._lock:
            db = self._db()
            try:
                with db:
                    db.executemany(
                        "INSERT OR REPLACE INTO responses (key, identity, kind, value) "
                        "VALUES (?, ?, ?, ?)",
                        [(k, identity, kind, json.dumps(v)) for k, v in items],
                    )
            except sqlite3.DatabaseError as exc:
                raise self._unusable(exc) from None

    def __len__(self) -> int:
        with self._lock:
            return int(self._db().execute("SELECT COUNT(*) FROM responses").fetchone()[0])

    def close(self) -> None:
        """Close the connection (reopened on next use)."""
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None


class CachedModel:
    """Wrap a :class:`LanguageModel` so every response is cached in SQLite.

    Args:
        model: the backend.
        path: the SQLite file (created on first use).
        chunk_size: requests sent to the model per call; each chunk is committed before
            the next starts, which bounds the work an interruption can lose.

    ``calls_made`` counts requests the model answered, ``calls_cached`` requests served
    without a model call (cache hits and in-batch duplicates); they always sum to the
    number of requests seen. Other attributes are forwarded to the wrapped model.

    Example:
        >>> lm = CachedModel(load_model("embedded"), "cache.sqlite")  # doctest: +SKIP
        >>> lm.loglikelihood([("2 + 2 =", " 4")]); lm.calls  # doctest: +SKIP
        {'made': 1, 'cached': 0}
    """

    def __init__(self, model: LanguageModel, path: str | Path, *, chunk_size: int = 32) -> None:
        self.model = model
        self.cache = ResponseCache(path)
        self.chunk_size = max(1, int(chunk_size))
        self.calls_made = 0
        self.calls_cached = 0
        self._lock = threading.Lock()
        self._inflight: dict[str, threading.Event] = {}

    @property
    def identity(self) -> str:
        """The wrapped model's identity (the cache is transparent)."""
        return self.model.identity

    @property
    def calls(self) -> dict[str, int]:
        """``{"made": ..., "cached": ...}`` as reported in results files."""
        return {"made": self.calls_made, "cached": self.calls_cached}

    def __getattr__(self, name: str) -> Any:
        if name == "model":  # not yet set (copy/unpickle): avoid infinite recursion
            raise AttributeError(name)
        return getattr(self.model, name)

    @property
    def capabilities(self) -> frozenset[str]:
        """The wrapped model's capabilities."""
        return frozenset(self.model.capabilities)

    def loglikelihood(self, requests: Sequence[tuple[str, str]]) -> list[list[float]]:
        """Cached :meth:`LanguageModel.loglikelihood`."""
        reqs = [(str(c), str(k)) for c, k in requests]
        got = self._run("loglikelihood", {}, reqs, self.model.loglikelihood)
        return checked_logprobs(f"{self.cache.path} (response cache)", reqs, got)

    def complete(
        self, prompts: Sequence[str], *, max_tokens: int = 32, stop: Sequence[str] = ()
    ) -> list[str]:
        """Cached :meth:`LanguageModel.complete` (keyed by ``max_tokens`` and ``stop``)."""
        params = {"max_tokens": int(max_tokens), "stop": list(stop)}

        def call(batch: list[str]) -> list[str]:
            return self.model.complete(batch, max_tokens=max_tokens, stop=stop)

        return self._run("complete", params, [str(p) for p in prompts], call)

    def render(
        self,
        messages: Sequence[ChatTurn],
        tools: Sequence[ToolSpec] | None = None,
        *,
        add_generation_prompt: bool = True,
    ) -> str:
        """The wrapped model's rendering (not cached: it is cheap and deterministic)."""
        return self.model.render(messages, tools, add_generation_prompt=add_generation_prompt)

    def generate(
        self,
        messages: Sequence[ChatTurn],
        tools: Sequence[ToolSpec] | None = None,
        *,
        max_tokens: int = 256,
        temperature: float = 0.0,
        seed: int | None = None,
        stop: Sequence[str] = (),
    ) -> Generation:
        """Cached :meth:`LanguageModel.generate`, keyed by the messages, the tools and every
        decoding parameter (``max_tokens``, ``temperature``, ``seed``, ``stop``)."""
        params = {
            "max_tokens": int(max_tokens),
            "temperature": float(temperature),
            "seed": seed,
            "stop": list(stop),
        }
        payload = {"messages": [dict(m) for m in messages], "tools": list(tools or [])}

        def call(batch: list[dict[str, Any]]) -> list[dict[str, Any]]:
            return [
                self.model.generate(
                    p["messages"],
                    p["tools"] or None,
                    max_tokens=max_tokens,
                    temperature=temperature,
                    seed=seed,
                    stop=stop,
                ).to_dict()
                for p in batch
            ]

        (value,) = self._run("generate", params, [payload], call)
        return Generation.from_dict(value)

    def _run(
        self,
        kind: str,
        params: dict[str, Any],
        payloads: list[Any],
        call: Callable[[list[Any]], list[Any]],
    ) -> list[Any]:
        identity = self.model.identity
        keys = [
            request_key(identity, kind, params, list(p) if kind == "loglikelihood" else p)
            for p in payloads
        ]
        unique: dict[str, Any] = {}
        for k, p in zip(keys, payloads, strict=True):
            unique.setdefault(k, p)
        values = self.cache.get_many(list(unique))
        # Claim the missing keys no other thread is computing; wait for the others.
        mine: list[str] = []
        theirs: list[threading.Event] = []
        with self._lock:
            # A key that was neither cached at the first look nor is in flight now may
            # have been finished by another thread in between: look again under the lock
            # (a finisher stores before it releases its claim).
            unclaimed = [k for k in unique if k not in values and k not in self._inflight]
            if unclaimed:
                values.update(self.cache.get_many(unclaimed))
            for k in unique:
                if k in values:
                    continue
                if k in self._inflight:
                    theirs.append(self._inflight[k])
                else:
                    self._inflight[k] = threading.Event()
                    mine.append(k)
        try:
            for start in range(0, len(mine), self.chunk_size):
                chunk = mine[start : start + self.chunk_size]
                answers = call([unique[k] for k in chunk])
                if len(answers) != len(chunk):
                    raise RuntimeError(
                        f"{identity}: {kind} returned {len(answers)} answers "
                        f"for {len(chunk)} requests"
                    )
                self.cache.put_many(identity, kind, list(zip(chunk, answers, strict=True)))
                values.update(zip(chunk, answers, strict=True))
                with self._lock:
                    self.calls_made += len(chunk)
                    for k in chunk:
                        self._inflight.pop(k).set()
        finally:
            with self._lock:  # release claims left by a failure so others can retry
                for k in mine:
                    ev = self._inflight.pop(k, None)
                    if ev is not None:
                        ev.set()
        for ev in theirs:
            ev.wait()
        missing = [k for k in unique if k not in values]
        if missing:
            values.update(self.cache.get_many(missing))
        still = [k for k in unique if k not in values]
        if still:  # another thread failed on these; compute them here
            values.update(zip(still, call([unique[k] for k in still]), strict=True))
            self.cache.put_many(identity, kind, [(k, values[k]) for k in still])
            with self._lock:
                self.calls_made += len(still)
        with self._lock:
            self.calls_cached += len(keys) - len(mine) - len(still)
        logger.debug("%s %s: %d requests, %d new", identity, kind, len(keys), len(mine))
        return [values[k] for k in keys]

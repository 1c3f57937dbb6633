"""The SQLite response cache: hits, misses, in-batch dedupe, resume, threads."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Sequence

import pytest

from toolaudit.models import CachedModel, load_model


class CountingModel:
    """A deterministic model that records every request it receives."""

    identity = "test:counting"

    def __init__(self, fail_after: int | None = None) -> None:
        self.seen: list[object] = []
        self.fail_after = fail_after
        self.lock = threading.Lock()

    def _record(self, items: Sequence[object]) -> None:
        with self.lock:
            if self.fail_after is not None and len(self.seen) + len(items) > self.fail_after:
                raise KeyboardInterrupt("simulated interruption")
            self.seen.extend(items)

    def loglikelihood(self, requests: Sequence[tuple[str, str]]) -> list[list[float]]:
        self._record(list(requests))
        return [[-0.5 * len(c)] * len(k) for c, k in requests]

    def complete(self, prompts, *, max_tokens=32, stop=()):
        self._record(list(prompts))
        return [p[::-1][:max_tokens] for p in prompts]


def test_cached_model_dedupes_within_a_batch_and_counts(tmp_path):
    inner = CountingModel()
    lm = CachedModel(inner, tmp_path / "c.sqlite")
    out = lm.loglikelihood([("ab", "x"), ("ab", "x"), ("abc", "yz")])
    assert out == [[-1.0], [-1.0], [-1.5, -1.5]]
    assert inner.seen == [("ab", "x"), ("abc", "yz")]
    assert lm.calls == {"made": 2, "cached": 1}


def test_cached_model_rerun_makes_zero_calls(tmp_path):
    path = tmp_path / "c.sqlite"
    first = CachedModel(CountingModel(), path)
    a = first.complete(["hello", "world"], max_tokens=3)
    inner = CountingModel()
    second = CachedModel(inner, path)
    b = second.complete(["hello", "world"], max_tokens=3)
    assert a == b == ["oll", "dlr"]
    assert inner.seen == []
    assert second.calls == {"made": 0, "cached": 2}


def test_cached_model_keys_on_decoding_parameters(tmp_path):
    inner = CountingModel()
    lm = CachedModel(inner, tmp_path / "c.sqlite")
    lm.complete(["hello"], max_tokens=3)
    lm.complete(["hello"], max_tokens=4)
    lm.complete(["hello"], max_tokens=4, stop=["l"])
    lm.loglikelihood([("hello", "")])
    assert lm.calls == {"made": 4, "cached": 0}


def test_cached_model_resumes_after_interruption_without_repeats(tmp_path):
    path = tmp_path / "c.sqlite"
    prompts = [f"p{i}" for i in range(10)]
    crashing = CountingModel(fail_after=4)
    lm = CachedModel(crashing, path, chunk_size=2)
    with pytest.raises(KeyboardInterrupt):
        lm.complete(prompts)
    assert crashing.seen == prompts[:4]  # two chunks finished and were committed
    inner = CountingModel()
    resumed = CachedModel(inner, path, chunk_size=2)
    assert resumed.complete(prompts) == [p[::-1] for p in prompts]
    assert inner.seen == prompts[4:]
    assert resumed.calls == {"made": 6, "cached": 4}


def test_cached_model_threads_share_work_once(tmp_path):
    inner = CountingModel()
    lm = CachedModel(inner, tmp_path / "c.sqlite")
    reqs = [(f"ctx{i % 7}", "x") for i in range(40)]
    results: list[list[list[float]]] = []

    def work() -> None:
        results.append(lm.loglikelihood(reqs))

    threads = [threading.Thread(target=work) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(results) == 6 and all(r == results[0] for r in results)
    assert sorted(inner.seen) == sorted({r for r in reqs})
    assert lm.calls_made == 7
    assert lm.calls_made + lm.calls_cached == 6 * 40


def test_cache_file_is_wal_and_stores_no_prompt_text(tmp_path):
    path = tmp_path / "c.sqlite"
    lm = CachedModel(CountingModel(), path)
    lm.complete(["secret prompt text"])
    lm.cache.close()
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    conn.close()
    assert b"secret prompt text" not in path.read_bytes()


def test_load_model_with_cache_wraps_the_backend(tmp_path):
    lm = load_model("py:tests.models.toy_backend:echo_upper", cache=tmp_path / "c.sqlite")
    assert isinstance(lm, CachedModel)
    assert lm.complete(["ab", "ab"]) == ["AB", "AB"]
    assert lm.calls == {"made": 1, "cached": 1}


def _edit(path, sql: str, *args: object) -> None:
    conn = sqlite3.connect(str(path))
    conn.execute(sql, args)
    conn.commit()
    conn.close()


@pytest.mark.parametrize(
    ("damage", "says"),
    [
        ("foreign", "its responses table has columns ['x']"),
        ("not-json", "a stored value is not JSON"),
        ("wrong-type", "log-probabilities are not numbers"),
        ("not-sqlite", "file is not a database"),
    ],
)
def test_a_damaged_cache_is_one_line_naming_the_file(tmp_path, damage: str, says: str) -> None:
    from toolaudit.errors import ToolAuditError

    path = tmp_path / "c.sqlite"
    if damage == "foreign":
        _edit(path, "CREATE TABLE responses (x INT)")
    elif damage == "not-sqlite":
        path.write_bytes(b"definitely not sqlite " * 100)
    else:
        CachedModel(CountingModel(), path).loglikelihood([("ab", "x")])
        value = "not json{" if damage == "not-json" else '"a string"'
        _edit(path, "UPDATE responses SET value = ?", value)
    with pytest.raises(ToolAuditError) as info:
        CachedModel(CountingModel(), path).loglikelihood([("ab", "x")])
    message = str(info.value)
    assert str(path) in message and says in message and "\n" not in message

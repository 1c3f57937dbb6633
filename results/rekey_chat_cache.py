"""One-off migration (2026-12-04) of the committed redaction caches, kept as the record of
how their keys changed.

``redact --chat`` used to be a model option: ``HFModel(chat=True)`` rendered each raw
prompt as one user turn (``self.render([{"role": "user", "content": prompt}])``) and
added ``,chat`` to the model identity, so the cache was keyed by (identity with
``,chat``, raw prompt). It is now the audit's: the prompt is rendered by the same call
before it reaches the model, and the cache is keyed by (the plain identity, rendered
prompt). The text the model reads is the same, so this script answers each request
from the old entry (the raw prompt recovered from the render call that made it) and lets
the cache store it under the new key, then drops the old entries. It computes nothing
and changes no answer: a request without an old entry stops the script.

Run from the repository root, with the folder's own command (its data made first):
    .venv/bin/python results/rekey_chat_cache.py results/redact-qwen
then ``bash results/redact-qwen/command.sh`` makes 0 model calls.
"""

from __future__ import annotations

import json
import shlex
import sqlite3
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import toolaudit.models as models
from toolaudit.cli.main import main
from toolaudit.models import CachedModel
from toolaudit.models._cache import ResponseCache, request_key


class Rekeyed:
    """The model under its plain identity, answering from the old chat-keyed entries."""

    def __init__(self, lm: Any, old_cache: Path) -> None:
        self.lm = lm
        self.old_identity = lm.identity[:-1] + ",chat]"
        self.old = ResponseCache(old_cache)
        self.raw: dict[str, str] = {}

    @property
    def identity(self) -> str:
        return str(self.lm.identity)

    @property
    def capabilities(self) -> frozenset[str]:
        return frozenset(self.lm.capabilities)

    def render(self, messages: Sequence[Any], tools: Any = None, **kw: Any) -> str:
        text = str(self.lm.render(messages, tools, **kw))
        self.raw[text] = messages[0]["content"]
        return text

    def _answers(self, kind: str, params: dict[str, Any], payloads: list[Any]) -> list[Any]:
        keys = [request_key(self.old_identity, kind, params, p) for p in payloads]
        found = self.old.get_many(keys)
        if len(found) != len(set(keys)):
            sys.exit(f"{len(set(keys)) - len(found)} {kind} requests have no old entry; stop")
        return [found[k] for k in keys]

    def loglikelihood(self, requests: Sequence[tuple[str, str]]) -> list[list[float]]:
        return self._answers("loglikelihood", {}, [[self.raw[c], k] for c, k in requests])

    def complete(
        self, prompts: Sequence[str], *, max_tokens: int = 32, stop: Sequence[str] = ()
    ) -> list[str]:
        params = {"max_tokens": int(max_tokens), "stop": list(stop)}
        return self._answers("complete", params, [self.raw[p] for p in prompts])


def rekey(folder: Path) -> None:
    cache = folder / "cache.sqlite"
    real_load = models.load_model

    def load(spec: str, *, cache: Any = None, **options: Any) -> Any:
        lm = Rekeyed(real_load(spec, **options), Path(cache))
        return CachedModel(lm, cache)

    # Since e2bd2a4 the CLI records input paths absolute; this folder's run_config.json
    # (written before) spells the same file relative to the repository root.
    run_config = folder / "run_config.json"
    recorded = json.loads(run_config.read_text())
    recorded["data"] = str(Path(recorded["data"]).resolve())
    run_config.write_text(json.dumps(recorded, indent=2, sort_keys=True) + "\n")
    models.load_model = load  # type: ignore[assignment]
    script = (folder / "command.sh").read_text()
    data = script.split("data=", 1)[1].split()[0]
    words = shlex.split(script.split("exec ", 1)[1].replace("\\\n", " ").replace("$data", data))
    argv = words[words.index("redact") :]
    try:
        rc = main(argv)
    finally:
        models.load_model = real_load
    if rc != 0:
        sys.exit(rc)
    log = folder / "run_log.jsonl"  # this pass made no model call: its line would say so
    log.write_text("".join(log.read_text().splitlines(keepends=True)[:-1]))
    identity = Rekeyed(real_load(argv[argv.index("--model") + 1]), cache).old_identity
    with sqlite3.connect(cache) as db:
        gone = db.execute("DELETE FROM responses WHERE identity = ?", (identity,)).rowcount
    with sqlite3.connect(cache) as db:
        db.execute("VACUUM")
    print(f"{folder}: {gone} entries of {identity} moved to the plain identity")


if __name__ == "__main__":
    for arg in sys.argv[1:]:
        rekey(Path(arg))

"""Time of one seed of the synthetic dilution sweep's slot counting: tokenizing each
slot's text (the code before) vs counting it from the pool's words (``SlotCounter``).

The synthetic sweep (seed Appendix E) appends K synthetic slots (pool sections repeated
or clipped to a drawn length) to the carrier's counts and refits at each K. Both ways
run here on the same corpus and the same draws (one seed, the audit's streams: fit and
eval rows drawn separately) and build the running sum at K = 1, 2, 5, 10, 20:

* ``tokenize``: every slot's text is built (``slot_texts``), tokenized into the corpus
  (``add_sections``) and added block by block (``append_section_blocks``);
* ``words``: ``SlotCounter`` indexes the pool's words once (its time is included) and
  adds the slots between two K values in one pass of row blocks.

No fit is run. The running sums are compared in term-key space at every K, by a
digest of all their (row, n-gram, count) entries read in row blocks (``same=True``: the
same entries at every K). The last line is ``ratio=<tokenize/words seconds> same=<bool>``.

    python benchmarks/synthetic_speed.py --scale 0.2
    python benchmarks/synthetic_speed.py --data tcr1/examples.jsonl      # the seed's size
"""

from __future__ import annotations

import hashlib
import time

import numpy as np
from _sweep import CARRIER, arguments, load


def _digest(store, name: str, keys: np.ndarray, n_rows: int, block: int = 2048) -> str:
    """SHA-256 of a stored sum's (row, term key, count) triplets in (row, key) order, read
    block by block: comparable between sums whose term ids differ, in bounded memory."""
    h = hashlib.sha256()
    for a in range(0, n_rows, block):
        coo = store.rows(name, np.arange(a, min(a + block, n_rows))).tocoo()
        trip = np.stack([coo.row + a, keys[coo.col], coo.data.astype(np.int64)], axis=1)
        h.update(np.ascontiguousarray(trip[np.lexsort((trip[:, 1], trip[:, 0]))]).tobytes())
    return h.hexdigest()


def main() -> None:
    sw = load(arguments(__doc__ or ""))
    from toolaudit.leakage._dilution import slot_texts
    from toolaudit.leakage._synthetic import SlotCounter

    corpus = sw.engine.corpus
    store = corpus.mats["char_wb"]
    n = corpus.n_rows
    pool, k_values = sw.pool, sw.k_values
    k_max = k_values[-1]
    slot_chars = sum(int(length.sum()) for _, length in sw.slots(0, k_max))
    print(f"pool: {len(pool)} sections; {k_max} slots = {slot_chars:,} characters", flush=True)

    sums: dict[str, list[str]] = {"tokenize": [], "words": []}
    secs: dict[str, float] = {}
    for way in ("tokenize", "words"):
        acc = f"__{way}"
        corpus.copy_section("char_wb", CARRIER, acc)
        t0 = time.perf_counter()
        counter = SlotCounter(corpus, pool, sw.index) if way == "words" else None
        done = 0
        for k in k_values:
            if counter is not None:
                counter.append(acc, sw.slots(done, k))
            else:
                for j in range(done, k):
                    corpus.add_sections(
                        {"__s": slot_texts(n, sw.draws, pool, j)}, analyzers=("char_wb",)
                    )
                    corpus.append_section_blocks("char_wb", acc, None, "__s")
                    corpus.drop_sections(["__s"])
            done = k
            pause = time.perf_counter()
            sums[way].append(_digest(store, acc, corpus.tables["char_wb"].keys, n))
            t0 += time.perf_counter() - pause  # the comparison is not timed
            print(f"{way:8s} K={k:<3d} {time.perf_counter() - t0:8.1f} s", flush=True)
        secs[way] = time.perf_counter() - t0
        if counter is not None:
            counter.close()
        nnz = store.nnz(acc)
        store.pop(acc)
    same = sums["tokenize"] == sums["words"]
    print(f"tokenize={secs['tokenize']:.1f}s words={secs['words']:.1f}s K={k_max} nnz={nnz:,}")
    print(f"ratio={secs['tokenize'] / secs['words']:.2f} same={same}")


if __name__ == "__main__":
    main()

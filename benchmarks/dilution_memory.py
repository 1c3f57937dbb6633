"""Peak memory of the synthetic dilution sweep's append step: whole matrix vs row blocks.

The synthetic sweep (seed Appendix E) keeps a running sum of the carrier's counts plus K
synthetic slots in the on-disk section store. Appending slot K the whole-matrix way
(``SectionCorpus.append_section``, the code before) reads the whole running sum into
memory, adds the slot and writes the new sum, so the old and the new sum coexist. The
block way (``SectionCorpus.append_section_blocks``, what the audit runs) reads and writes
one block of rows at a time. Both build exactly the same matrix (``same_sum`` below).

Each way runs in its own child process on the same data and the same draws: build the
corpus for the dilution feature set (char_wb 3-5 by default), tokenize slots 1..K as
the sweep does, and around every append reset the kernel's peak-RSS counter
(``/proc/self/clear_refs``) and read ``VmHWM`` afterwards. Printed per way: the highest
peak over the K appends, the resident level just before that append, and the peak
above that level (what the append itself adds). The fits are not run: this isolates
the append (the K=20 fit's own peak is the audit's floor, see docs/leakage.md).
The last line is ``ratio=<whole/blocks peak above level> same_sum=<bool>``.

    python benchmarks/dilution_memory.py --scale 0.15        # generated in memory
    python benchmarks/dilution_memory.py --data tcr/examples.jsonl --k 20
    python benchmarks/dilution_memory.py --ways blocks --block-rows 256   # one way only
"""

from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
import sys
from pathlib import Path

import numpy as np

CARRIER = "thermompnn_ddg"
POOL = ("cdr3b_biophysics", "mcpas_retrieval", "stability_summary")  # seed: tools 1, 2, 4


def _status_kb(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise RuntimeError(f"{field} not in /proc/self/status (Linux only)")


def _reset_peak() -> None:
    Path("/proc/self/clear_refs").write_text("5")  # VmHWM := current VmRSS


def child(args: argparse.Namespace) -> dict:
    """One way of appending, in this process; returns its figures."""
    from toolaudit.leakage import FEATURE_SETS, PT2DEngine
    from toolaudit.leakage._dilution import draw_slots, slot_texts
    from toolaudit.leakage._store import return_freed_memory

    return_freed_memory()  # as the leakage command does
    if args.data:
        from toolaudit.traces import Example, read_jsonl

        examples = list(read_jsonl(Path(args.data), Example))
    else:
        from toolaudit.datasets import make_tcr_shortcut

        examples = make_tcr_shortcut(scale=args.scale, seed=0)
    spec = FEATURE_SETS[args.features]
    engine = PT2DEngine(examples, [spec])
    corpus = engine.corpus
    texts = engine.columns.texts
    pool = [t for name in POOL for t in texts[name] if t]
    n = corpus.n_rows
    rows = np.arange(n)
    draws = [(rows, *draw_slots(n, rows, len(pool), args.k, np.random.default_rng([0, 2])))]
    corpus.drop_sections([t for t in engine.tools if t != args.carrier])  # as the audit
    del examples
    analyzer = spec.analyzer
    store = corpus.mats[analyzer]
    acc_name = "__syn_acc"
    corpus.copy_section(analyzer, args.carrier, acc_name)
    prev = corpus.last_tokens([args.carrier]) if analyzer == "word" else None
    steps = []
    for k in range(1, args.k + 1):
        name = f"__syn{k - 1}"
        corpus.add_sections({name: slot_texts(n, draws, pool, k - 1)}, analyzers=(analyzer,))
        level = _status_kb("VmRSS")
        _reset_peak()
        if args.child == "whole":
            acc, prev = corpus.append_section(analyzer, store[acc_name], prev, name)
            store[acc_name] = acc
            del acc
        else:
            prev = corpus.append_section_blocks(
                analyzer, acc_name, prev, name, block_rows=args.block_rows
            )
        steps.append({"k": k, "level_kb": level, "peak_kb": _status_kb("VmHWM")})
        corpus.drop_sections([name])
    final = store[acc_name]
    final.resize((final.shape[0], corpus.tables[analyzer].size))
    digest = hashlib.sha256()
    for arr in (final.data, final.indices, final.indptr.astype(np.int64)):
        digest.update(np.ascontiguousarray(arr).tobytes())
    top = max(steps, key=lambda s: s["peak_kb"])
    return {
        "way": args.child,
        "rows": n,
        "nnz": int(final.nnz),
        "sha256": digest.hexdigest(),
        "peak_kb": top["peak_kb"],
        "level_kb": top["level_kb"],
        "at_k": top["k"],
        "above_kb": max(s["peak_kb"] - s["level_kb"] for s in steps),
    }


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", default=None, help="examples.jsonl (default: generate)")
    p.add_argument("--scale", type=float, default=0.15, help="tcr-shortcut scale if no --data")
    p.add_argument("--k", type=int, default=20, help="synthetic slots appended (default 20)")
    p.add_argument("--features", default="char_wb_3_5", help="dilution feature set")
    p.add_argument("--carrier", default=CARRIER)
    p.add_argument("--block-rows", type=int, default=1024)
    p.add_argument("--ways", nargs="+", choices=["whole", "blocks"], default=["whole", "blocks"])
    p.add_argument("--child", choices=["whole", "blocks"], default=None, help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.child:
        print(json.dumps(child(args)))
        return
    res = {}
    for way in args.ways:  # one child at a time: each peak is its own
        cmd = [sys.executable, __file__, *sys.argv[1:], "--child", way]
        out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
        res[way] = json.loads(out.strip().splitlines()[-1])
        r = res[way]
        print(
            f"{way:6s} rows={r['rows']} final_nnz={r['nnz']} peak={r['peak_kb'] / 1e6:.3f} GB "
            f"(at K={r['at_k']}, resident before {r['level_kb'] / 1e6:.3f} GB) "
            f"max above level={r['above_kb'] / 1e6:.3f} GB",
            flush=True,
        )
    if len(res) < 2:
        return
    w, b = res["whole"], res["blocks"]
    print(f"peak ratio whole/blocks={w['peak_kb'] / b['peak_kb']:.2f}")
    print(
        f"ratio={w['above_kb'] / max(b['above_kb'], 1):.2f} "
        f"same_sum={w['sha256'] == b['sha256'] and w['nnz'] == b['nnz']}"
    )


if __name__ == "__main__":
    main()

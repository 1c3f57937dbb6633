"""What warm starts would save in the synthetic dilution sweep, and what they change.

The synthetic sweep refits the carrier plus K synthetic slots at K = 1, 2, 5, 10, 20
(seed Appendix E); its fits are the audit's floor at scale 1 (docs/leakage.md). Each
K's fit could start from the previous K's coefficients (mapped term by term: a term
new at this K starts at 0) instead of from zero. scikit-learn's liblinear has no warm
start, so such fits are no longer scikit-learn's; the audit requires AUROCs within 1e-9
of scikit-learn's. This benchmark runs the sweep's fits of one seed both ways on the
same designs (fit on train, scored on test, char_wb 3-5, the audit's defaults) and
prints, per K, TRON iterations and seconds cold and warm, and the AUROC difference.
The last line is ``ratio=<cold/warm fit seconds> max_auroc_diff=<...>``.

    python benchmarks/warm_start.py --data tcr02/examples.jsonl
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

CARRIER = "thermompnn_ddg"
POOL = ("cdr3b_biophysics", "mcpas_retrieval", "stability_summary")  # seed: tools 1, 2, 4


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", default=None, help="examples.jsonl (default: generate)")
    p.add_argument("--scale", type=float, default=0.2, help="tcr-shortcut scale if no --data")
    p.add_argument("--k", type=int, nargs="+", default=[1, 2, 5, 10, 20], help="K values")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()

    from threadpoolctl import threadpool_limits

    from toolaudit.leakage import FEATURE_SETS, PT2DEngine
    from toolaudit.leakage._dilution import _slot_arrays, draw_slots
    from toolaudit.leakage._engine import ScopeCounts
    from toolaudit.leakage._synthetic import SlotCounter
    from toolaudit.leakage._tron import class_grouped, fit_l2r_lr
    from toolaudit.stats import auroc

    if args.data:
        from toolaudit.traces import Example, read_jsonl

        examples = list(read_jsonl(Path(args.data), Example))
    else:
        from toolaudit.datasets import make_tcr_shortcut

        examples = make_tcr_shortcut(scale=args.scale, seed=0)
    y = np.array([e.label for e in examples])
    fit = np.flatnonzero([e.split == "train" for e in examples])
    ev = np.flatnonzero([e.split == "test" for e in examples])
    spec = FEATURE_SETS["char_wb_3_5"]
    engine = PT2DEngine(examples, [spec])
    del examples
    corpus = engine.corpus
    texts = engine.columns.texts
    audited = np.union1d(fit, ev)
    pool = [texts[t][i] for t in POOL for i in audited if texts[t][i]]
    index = [(t, np.asarray([i for i in audited if texts[t][i]], dtype=np.int64)) for t in POOL]
    lengths = np.array([len(s) for s in pool], dtype=np.int64)
    n = corpus.n_rows
    k_values = sorted(set(args.k))
    draws = [
        (rows, *draw_slots(n, rows, len(pool), k_values[-1], np.random.default_rng([args.seed, s])))
        for rows, s in ((fit, 0), (ev, 1))
    ]
    counter = SlotCounter(corpus, pool, index)
    corpus.copy_section("char_wb", CARRIER, "__acc")
    fit_rows = class_grouped(fit, y)
    prev: tuple[np.ndarray, np.ndarray, float] | None = None  # vocab, coef, intercept
    done = 0
    secs = {"cold": 0.0, "warm": 0.0}
    worst = 0.0
    print(
        f"{'K':>3} {'nnz':>11} {'iter cold':>9} {'warm':>5} {'s cold':>7} {'warm':>6}  auroc diff"
    )
    for k in k_values:
        counter.append("__acc", [_slot_arrays(n, draws, lengths, j) for j in range(done, k)])
        done = k
        d = engine.design(ScopeCounts(corpus, "char_wb", ["__acc"]), spec, fit_rows, ev)
        warm = None
        if prev is not None:
            vocab0, coef0, b0 = prev
            pos = np.searchsorted(vocab0, d.vocab)
            pos = np.minimum(pos, vocab0.size - 1)
            same = vocab0[pos] == d.vocab
            coef = np.where(same, coef0[pos], 0.0)
            warm = (coef, b0)
        out = {}
        with threadpool_limits(1, "blas"):
            for way, start in (("cold", None), ("warm", warm)):
                if start is None and way == "warm":
                    continue
                t0 = time.perf_counter()
                f = fit_l2r_lr(d.x_fit, y[fit_rows], max_iter=4000, warm=start)
                secs[way] += time.perf_counter() - t0
                score = d.x_eval @ f.coef + f.intercept
                out[way] = (f, auroc(y[ev], score), time.perf_counter() - t0)
        cold = out["cold"]
        sorter = np.argsort(d.vocab)
        prev = (d.vocab[sorter], cold[0].coef[sorter], cold[0].intercept)
        if "warm" in out:
            w = out["warm"]
            diff = abs(w[1] - cold[1])
            worst = max(worst, diff)
            print(
                f"{k:3d} {d.x_fit.nnz:11,d} {cold[0].n_iter:9d} {w[0].n_iter:5d} "
                f"{cold[2]:7.1f} {w[2]:6.1f}  {diff:.3e}",
                flush=True,
            )
        else:
            secs["cold"] -= cold[2]  # K with no earlier K: no warm start to compare
            print(
                f"{k:3d} {d.x_fit.nnz:11,d} {cold[0].n_iter:9d} {'-':>5} {cold[2]:7.1f}", flush=True
            )
        del d
    counter.close()
    print(f"fits after the first K: cold {secs['cold']:.1f} s, warm {secs['warm']:.1f} s")
    print(f"ratio={secs['cold'] / max(secs['warm'], 1e-9):.2f} max_auroc_diff={worst:.3e}")


if __name__ == "__main__":
    main()

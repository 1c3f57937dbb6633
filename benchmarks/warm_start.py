"""What warm starts would save in the synthetic dilution sweep, and what they change.

The synthetic sweep refits the carrier plus K synthetic slots at K = 1, 2, 5, 10, 20
(seed Appendix E); its fits are the audit's floor at scale 1 (docs/leakage.md). Each
K's fit could start from the previous K's coefficients (mapped term by term: a term
new at this K starts at 0) instead of from zero. scikit-learn's liblinear has no warm
start, so such fits are no longer scikit-learn's; the audit requires AUROCs within 1e-9
of scikit-learn's. This benchmark runs the sweep's fits of one seed both ways on the
same designs (fit on train, scored on test, char_wb 3-5, the audit's defaults) and
prints, per K, TRON iterations and seconds cold and warm, and the AUROC difference.
The last line is ``ratio=<cold/warm fit seconds> max_auroc_diff=<...>``. ``--smoke``
checks in seconds that the script runs (scale 0.005, K = 1 and 2; its ratio means
nothing).

    python benchmarks/warm_start.py --data tcr02/examples.jsonl
    python benchmarks/warm_start.py --smoke
"""

from __future__ import annotations

import time

import numpy as np
from _sweep import arguments, load


def main() -> None:
    sw = load(arguments(__doc__ or ""))
    from threadpoolctl import threadpool_limits

    from toolaudit.leakage import FEATURE_SETS
    from toolaudit.leakage._tron import fit_l2r_lr
    from toolaudit.stats import auroc

    engine, y, fit_rows, ev = sw.engine, sw.y, sw.fit, sw.ev
    spec = FEATURE_SETS["char_wb_3_5"]
    points = sw.points()
    prev: tuple[np.ndarray, np.ndarray, float] | None = None  # vocab, coef, intercept
    secs = {"cold": 0.0, "warm": 0.0}
    worst = 0.0
    print(
        f"{'K':>3} {'nnz':>11} {'iter cold':>9} {'warm':>5} {'s cold':>7} {'warm':>6}  auroc diff"
    )
    for k in sw.k_values:
        d = engine.design(points.pop(k), spec, fit_rows, ev)
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
                f = fit_l2r_lr(d.x_fit, y[fit_rows], max_iter=4000, warm=start, threads=2)
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
    print(f"fits after the first K: cold {secs['cold']:.1f} s, warm {secs['warm']:.1f} s")
    print(f"ratio={secs['cold'] / max(secs['warm'], 1e-9):.2f} max_auroc_diff={worst:.3e}")


if __name__ == "__main__":
    main()

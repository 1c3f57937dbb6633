"""The synthetic dilution sweep's designs: the straightforward way (build every row's
text, carrier plus K slots, and vectorize it with scikit-learn's ``TfidfVectorizer``) vs
the engine's (slots as word recipes, ``_synthetic.SlotPlanner``, written into the
design by the kernels without any slot text).

The synthetic sweep (seed Appendix E) appends K synthetic slots (pool sections repeated
or clipped to a drawn length) to the carrier and refits at each K. Both ways build the
fit rows' and eval rows' TF-IDF matrices (char_wb 3-5, the seed's max_features and
min_df) at K = 1, 2, 5, 10, 20 on the same corpus and the same draws (one seed, the
audit's streams: fit and eval rows drawn separately). No fit is run. The vocabularies
must be equal and the matrices within 1e-12 (``same=True``). The last line is
``ratio=<straightforward/engine seconds> same=<bool>``. ``--smoke`` checks in seconds
that the script runs (scale 0.005, K = 1 and 2; its ratio means nothing).

    python benchmarks/synthetic_speed.py --scale 0.2
    python benchmarks/synthetic_speed.py --smoke
    python benchmarks/synthetic_speed.py --data tcr1/examples.jsonl --k 1 2   # seed's size
"""

from __future__ import annotations

import time

from _sweep import CARRIER, arguments, load


def main() -> None:
    sw = load(arguments(__doc__ or ""))
    from sklearn.feature_extraction.text import TfidfVectorizer

    from toolaudit.leakage import FEATURE_SETS
    from toolaudit.leakage._dilution import slot_texts

    spec = FEATURE_SETS["char_wb_3_5"]
    engine, fit, ev = sw.engine, sw.fit, sw.ev
    n = len(sw.y)
    t0 = time.perf_counter()
    points = sw.points()
    designs = {}
    for k in sw.k_values:
        d = engine.design(points.pop(k), spec, fit, ev)
        designs[k] = (engine.terms("char_wb", d.vocab), d.x_fit.tocsr(), d.x_eval)
        print(f"engine          K={k:<3d} {time.perf_counter() - t0:8.1f} s", flush=True)
    t_engine = time.perf_counter() - t0
    same = True
    t0 = time.perf_counter()
    texts = list(engine.columns.texts[CARRIER])
    done = 0
    for k in sw.k_values:
        for j in range(done, k):
            slot = slot_texts(n, sw.draws, sw.pool, j)
            texts = [a + "\n" + b for a, b in zip(texts, slot, strict=True)]
        done = k
        vec = TfidfVectorizer(**spec.vectorizer_kwargs())
        x_fit = vec.fit_transform([texts[i] for i in fit])
        x_ev = vec.transform([texts[i] for i in ev])
        x_fit.sort_indices()
        pause = time.perf_counter()
        vocab, e_fit, e_ev = designs.pop(k)
        ref_vocab = sorted(vec.vocabulary_, key=vec.vocabulary_.__getitem__)
        ok = vocab == ref_vocab
        ok = ok and abs(e_fit - x_fit).max() <= 1e-12 and abs(e_ev - x_ev).max() <= 1e-12
        same = same and bool(ok)
        t0 += time.perf_counter() - pause  # the comparison is not timed
        print(
            f"straightforward K={k:<3d} {time.perf_counter() - t0:8.1f} s  nnz {x_fit.nnz:,} "
            f"same={bool(ok)}",
            flush=True,
        )
    t_ref = time.perf_counter() - t0
    print(f"straightforward={t_ref:.1f}s engine={t_engine:.1f}s")
    print(f"ratio={t_ref / t_engine:.2f} same={same}")


if __name__ == "__main__":
    main()

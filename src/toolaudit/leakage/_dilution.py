"""Dilution experiments (seed Appendix E).

(a) Real-tool subset sweep: the carrier tool alone, then the other tools added one at a
time in a given order, refitting at every point (sections are always joined in trace
order, so the endpoints equal the carrier scope and the full trace exactly).

(b) Label-independent synthetic additions: a pool of non-carrier sections (tools that
repeat the carrier's token-class values are left out) from every audited row. For each
example and synthetic slot we draw a source section and, independently, a target
length from the pool, and repeat or clip the source to that length. Neither the label
nor the group is ever used; fit and eval rows draw from independent random streams.
K slots are appended after the carrier; each K is refit for several seeds.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from toolaudit.leakage._engine import PT2DEngine, ScopeCounts, run_jobs
from toolaudit.leakage._features import FEATURE_SETS, FeatureSpec
from toolaudit.leakage._partition import Partition
from toolaudit.leakage._provenance import TokenClass
from toolaudit.leakage._scoring import summarize
from toolaudit.leakage._tron import class_grouped
from toolaudit.stats import auroc

if TYPE_CHECKING:
    from toolaudit.leakage._audit import LeakageConfig, ScopeResult

logger = logging.getLogger(__name__)

ProgressFn = Callable[[int, int, str], None]


def _spec(cfg: LeakageConfig, name: str) -> FeatureSpec:
    for spec in cfg.features:
        if spec.name == name:
            return spec
    return FEATURE_SETS[name]


def _fit_scores(
    engine: PT2DEngine,
    counts: Any,
    spec: FeatureSpec,
    part: Partition,
    y: np.ndarray,
    cfg: LeakageConfig,
    client: Any = None,
    *,
    release: bool = False,
) -> np.ndarray:
    """Scores of every evaluated row for one scope; ``release`` drops a wrapped count
    matrix as soon as the last fold's design is built (before its fit runs). Otherwise
    each eval matrix is built after its fit (see ``PT2DEngine.design``)."""

    def jobs() -> Any:
        last = len(part.folds) - 1
        for i, (fit, ev) in enumerate(part.folds):
            fit = class_grouped(fit, y)  # the fit runs on the design itself (see _tron)
            d = engine.design(counts, spec, fit, ev, lazy_eval=not release)
            if release and i == last and isinstance(counts, ScopeCounts):
                counts.release()
            yield i, (d.x_fit, y[fit], d.x_eval, 0)
            del d  # before the next design is built

    scores = np.full(len(y), np.nan)
    for i, out in run_jobs(jobs(), cfg.lr, n_jobs=cfg.n_jobs, backend=cfg.backend, client=client):
        scores[part.folds[i][1]] = out.scores
    return scores


def synthetic_text(source: str, length: int) -> str:
    """``source`` repeated or clipped to ``length`` characters."""
    if not source or length <= 0:
        return ""
    reps = -(-length // len(source))
    return (source * reps)[:length]


def draw_slots(
    n_rows: int, rows: np.ndarray, pool_size: int, k_max: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """(source index, length-donor index) for ``rows`` x ``k_max`` slots."""
    src = rng.integers(0, pool_size, size=(rows.size, k_max))
    length_of = rng.integers(0, pool_size, size=(rows.size, k_max))
    return src, length_of


def slot_texts(
    n_rows: int,
    draws: Sequence[tuple[np.ndarray, np.ndarray, np.ndarray]],
    pool: Sequence[str],
    slot: int,
) -> list[str]:
    """Text of synthetic slot ``slot`` for every row (empty where no stream drew it):
    ``draws`` holds (rows, source index, length-donor index) per random stream, as
    ``draw_slots`` returns them."""
    out = [""] * n_rows
    for rows, src, length_of in draws:
        for r_i, row in enumerate(rows):
            out[row] = synthetic_text(pool[src[r_i, slot]], len(pool[length_of[r_i, slot]]))
    return out


def _slot_arrays(
    n_rows: int,
    draws: Sequence[tuple[np.ndarray, np.ndarray, np.ndarray]],
    lengths: np.ndarray,
    slot: int,
) -> tuple[np.ndarray, np.ndarray]:
    """Slot ``slot`` as (source pool index, target length) per row (-1, 0: not drawn),
    the arrays form of ``slot_texts``."""
    src = np.full(n_rows, -1, dtype=np.int64)
    length = np.zeros(n_rows, dtype=np.int64)
    for rows, s, length_of in draws:
        src[rows] = s[:, slot]
        length[rows] = lengths[length_of[:, slot]]
    return src, length


def pool_tools_for(carrier: str, tools: Sequence[str], classes: Sequence[TokenClass]) -> list[str]:
    """Non-carrier tools for synthetic sections: every tool except the carrier and tools
    that repeat the carrier's own token-class values (the seed leaves out Tool 5, which
    serializes the same PDB id)."""
    linked = {n for c in classes if carrier in c.tools for n in c.same_values_as}
    dups = {t for c in classes if c.name in linked for t in c.tools}
    return [t for t in tools if t != carrier and t not in dups]


def run_dilution(
    engine: PT2DEngine,
    part: Partition,
    y: np.ndarray,
    groups: Sequence[str],
    cfg: LeakageConfig,
    scope_rows: Sequence[ScopeResult],
    classes: Sequence[TokenClass],
    *,
    known: dict[frozenset[str], np.ndarray] | None = None,
    progress: ProgressFn | None = None,
    client: Any = None,
    free_sections: bool = False,
) -> dict[str, Any]:
    """Both dilution sweeps; returns the ``dilution`` block of ``leakage.json``.

    ``known`` maps tool sets to scores already fitted with the same feature set (the
    scope table's tool and full-trace rows); those points are reused, not refitted.
    ``free_sections`` drops the non-carrier tools' counts before the synthetic sweep
    (the audit does, as nothing reads them afterwards).
    """
    known = dict(known or {})
    dcfg = cfg.dilution
    assert dcfg is not None
    spec = _spec(cfg, dcfg.features)
    tools = list(engine.tools)
    ranked = sorted(
        (r for r in scope_rows if r.scope != "full" and r.features == spec.name),
        key=lambda r: -np.nan_to_num(r.summary.auroc, nan=0.0),
    )
    carrier = dcfg.carrier or (ranked[0].scope if ranked else tools[0])
    order = list(dcfg.order) if dcfg.order else [t for t in tools if t != carrier]
    ev = part.eval_rows
    gev = [groups[i] for i in ev]
    real = []
    for j in range(len(order) + 1):
        subset = [carrier, *order[:j]]
        key = frozenset(subset)
        if key not in known:
            counts = engine.counts(spec.analyzer, subset)
            known[key] = _fit_scores(engine, counts, spec, part, y, cfg, client)
        scores = known[key]
        summ = summarize(y[ev], scores[ev], gev, n_boot=cfg.n_boot, seed=cfg.seed, group_ci=False)
        real.append(
            {"tools": subset, "size": len(subset), "auroc": summ.auroc, "ci95": list(summ.ci95)}
        )
        if progress is not None:
            progress(j + 1, len(order) + 1, f"dilution real {'+'.join(subset)}")
    pool_tools = (
        list(dcfg.pool_tools) if dcfg.pool_tools else pool_tools_for(carrier, tools, classes)
    )
    synthetic = _synthetic(
        engine, part, y, cfg, spec, carrier, pool_tools, known, progress, client, free_sections
    )
    return {
        "features": spec.name,
        "carrier": carrier,
        "order": order,
        "real": real,
        "synthetic": synthetic,
    }


def _synthetic(
    engine: PT2DEngine,
    part: Partition,
    y: np.ndarray,
    cfg: LeakageConfig,
    spec: FeatureSpec,
    carrier: str,
    pool_tools: list[str],
    known: dict[frozenset[str], np.ndarray],
    progress: ProgressFn | None,
    client: Any = None,
    free_sections: bool = False,
) -> dict[str, Any]:
    dcfg = cfg.dilution
    assert dcfg is not None
    audited = np.union1d(part.fit_rows, part.eval_rows)
    texts = engine.columns.texts
    pool = [texts[t][i] for t in pool_tools for i in audited if texts[t][i]]
    lengths = np.array([len(p) for p in pool], dtype=np.int64)
    k_values = sorted(set(dcfg.k_values))
    k_max = max(k_values) if k_values else 0
    seeds = [cfg.seed + i for i in range(dcfg.n_seeds)]
    out: dict[str, Any] = {
        "pool_tools": pool_tools,
        "pool_size": len(pool),
        "pool_mean_length": float(lengths.mean()) if lengths.size else 0.0,
        "seeds": seeds,
        "k_values": k_values,
        "points": [],
    }
    if not pool or not k_values:
        return out
    n = len(y)
    ev = part.eval_rows
    per_k: dict[int, list[float]] = {k: [] for k in k_values}
    streams = (
        [(part.folds[0][0], 0), (part.folds[0][1], 1)] if part.mode == "holdout" else [(audited, 2)]
    )
    counter = None
    if spec.analyzer == "char_wb":  # slots counted from the pool's words (see _synthetic)
        from toolaudit.leakage._synthetic import SlotCounter

        index = []
        for t in pool_tools:
            rows = np.asarray([i for i in audited if texts[t][i]], dtype=np.int64)
            index.append((t, rows))
        counter = SlotCounter(engine.corpus, pool, index)
    if free_sections:  # from here on only the carrier's counts are read
        engine.corpus.drop_sections([t for t in engine.tools if t != carrier])
    corpus = engine.corpus
    step = 0
    for seed in seeds:
        draws = []
        for rows, stream in streams:
            rng = np.random.default_rng([seed, stream])
            draws.append((rows, *draw_slots(n, rows, len(pool), k_max, rng)))
        # slots are added onto a running sum, which is kept in the section store between
        # points: while a point is fitted, memory holds its design matrices only, never
        # the counts of the carrier plus K slots; slots are added one row block at a time
        # (the old and the new sum never in memory)
        store = corpus.mats[spec.analyzer]
        acc_name = "__syn_acc"
        corpus.copy_section(spec.analyzer, carrier, acc_name)
        prev = corpus.last_tokens([carrier]) if spec.analyzer == "word" else None
        done = 0
        for k in k_values:
            if counter is not None and k > done:
                counter.append(
                    acc_name, [_slot_arrays(n, draws, lengths, j) for j in range(done, k)]
                )
            else:
                for j in range(done, k):  # word n-grams: tokenize each slot's text
                    name = f"__syn{j}"
                    corpus.add_sections(
                        {name: slot_texts(n, draws, pool, j)}, analyzers=(spec.analyzer,)
                    )
                    prev = corpus.append_section_blocks(spec.analyzer, acc_name, prev, name)
                    corpus.drop_sections([name])
            done = k
            if k == 0 and frozenset([carrier]) in known:
                scores = known[frozenset([carrier])]
            else:
                counts = ScopeCounts(corpus, spec.analyzer, [acc_name])
                scores = _fit_scores(engine, counts, spec, part, y, cfg, client)
                del counts
            per_k[k].append(auroc(y[ev], scores[ev]))
            step += 1
            if progress is not None:
                progress(step, len(seeds) * len(k_values), f"dilution synthetic seed {seed} K={k}")
        store.pop(acc_name)
    if counter is not None:
        counter.close()
    for k in k_values:
        vals = np.array(per_k[k], dtype=float)
        out["points"].append(
            {
                "k": k,
                "mean": float(np.mean(vals)),
                "sd": float(np.std(vals, ddof=1)) if vals.size > 1 else 0.0,
                "min": float(np.min(vals)),
                "max": float(np.max(vals)),
                "aurocs": vals.tolist(),
            }
        )
    return out

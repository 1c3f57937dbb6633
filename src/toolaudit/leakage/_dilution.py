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
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import scipy.sparse as sp

from toolaudit.leakage._engine import PT2DEngine, ScopeSource
from toolaudit.leakage._features import FEATURE_SETS, FeatureSpec
from toolaudit.leakage._fits import run_jobs
from toolaudit.leakage._kernels import Recipe, restrict_columns
from toolaudit.leakage._partition import Partition
from toolaudit.leakage._provenance import TokenClass
from toolaudit.leakage._scoring import summarize
from toolaudit.leakage._synthetic import SlotPlanner, synthetic_text
from toolaudit.leakage._tron import class_grouped
from toolaudit.leakage._words import csr_arrays
from toolaudit.progress import Progress
from toolaudit.stats import auroc

if TYPE_CHECKING:
    from toolaudit.leakage._config import LeakageConfig, ScopeResult

logger = logging.getLogger(__name__)


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
) -> np.ndarray:
    """Scores of every evaluated row for one scope: each fold's design is built, fitted
    and its eval rows scored (without their matrix, in process) before the next."""

    def jobs() -> Any:
        for i, (fit, ev) in enumerate(part.folds):
            fit = class_grouped(fit, y)  # the fit runs on the design itself (see _tron)
            d = engine.design(counts, spec, fit, ev, lazy_eval=True)
            yield i, (d.x_fit, y[fit], d.x_eval, 0)
            del d  # before the next design is built

    scores = np.full(len(y), np.nan)
    for i, out in run_jobs(
        jobs(),
        cfg.lr,
        n_jobs=cfg.n_jobs,
        backend=cfg.backend,
        client=client,
        threads=cfg.fit_threads(engine.threads),
    ):
        scores[part.folds[i][1]] = out.scores
    return scores


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
    progress: Progress | None = None,
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
    progress: Progress | None,
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
    planner = None
    if spec.analyzer == "char_wb":  # slots as word recipes (see _synthetic)
        index = []
        for t in pool_tools:
            rows = np.asarray([i for i in audited if texts[t][i]], dtype=np.int64)
            index.append((t, rows))
        planner = SlotPlanner(engine.corpus, pool, index)
    if free_sections:  # from here on only the carrier's words are read
        engine.corpus.drop_sections([t for t in engine.tools if t != carrier])
        if planner is not None:  # and only the feature set's char n-grams
            lens = engine.term_lengths("char_wb")
            assert lens is not None
            engine.corpus.drop_word_terms()
            engine.corpus.keep_char_lengths(*spec.ngram_range, lens)
    reuse = frozenset([carrier]) in known
    fitted = [k for k in k_values if not (k == 0 and reuse)]
    step = 0
    for seed in seeds:
        draws = []
        for rows, stream in streams:
            rng = np.random.default_rng([seed, stream])
            draws.append((rows, *draw_slots(n, rows, len(pool), k_max, rng)))
        if planner is not None:
            sources = _char_points(engine, planner, carrier, spec, part, y, draws, lengths, fitted)
        else:
            sources = _word_points(engine, carrier, part, y, draws, pool, fitted)
        for k in k_values:
            if k in sources:
                scores = _fit_scores(engine, sources.pop(k), spec, part, y, cfg, client)
            else:
                scores = known[frozenset([carrier])]
            per_k[k].append(auroc(y[ev], scores[ev]))
            step += 1
            if progress is not None:
                progress(step, len(seeds) * len(k_values), f"dilution synthetic seed {seed} K={k}")
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


def _char_points(
    engine: PT2DEngine,
    planner: Any,
    carrier: str,
    spec: FeatureSpec,
    part: Partition,
    y: np.ndarray,
    draws: Sequence[tuple[np.ndarray, np.ndarray, np.ndarray]],
    lengths: np.ndarray,
    ks: Sequence[int],
) -> dict[int, ScopeSource]:
    """One seed's dilution points (char_wb): the carrier plus its first K slots as word
    recipes, with every point's term statistics counted in one pass per fold."""
    n = len(y)
    k_max = max(ks, default=0)
    rec = planner.recipes([_slot_arrays(n, draws, lengths, j) for j in range(k_max)])
    corpus = engine.corpus
    bag = corpus.scope_bag([carrier])
    per_word = corpus.per_word("char_wb")
    if corpus.spec.char_range != spec.ngram_range:
        # only the feature set's n-gram lengths can enter its vocabulary: drop the others
        # from the per-word counts (the term ids stay); the audit has done it for good
        lens = engine.term_lengths("char_wb")
        assert lens is not None
        lo, hi = spec.ngram_range
        keep = np.flatnonzero((lens >= lo) & (lens <= hi))
        colmap = np.full(per_word.shape[1], -1, dtype=np.int32)
        colmap[keep] = keep.astype(np.int32)
        ptr, idx, val = restrict_columns(*csr_arrays(per_word), colmap)
        per_word = sp.csr_matrix((val, idx, ptr), shape=per_word.shape)
    recipe = Recipe((bag.indptr, bag.indices, bag.data), None, rec.slots, rec.pool)
    base = ScopeSource(recipe, per_word, per_word.shape[1], threads=engine.threads)
    points = {k: base.at(k) for k in ks}
    for fit, _ in part.folds:
        fit = class_grouped(fit, y)
        for k, stats in zip(ks, base.stats_at(fit, ks), strict=True):
            points[k].set_stats(fit, stats)
    return points


def _word_points(
    engine: PT2DEngine,
    carrier: str,
    part: Partition,
    y: np.ndarray,
    draws: Sequence[tuple[np.ndarray, np.ndarray, np.ndarray]],
    pool: Sequence[str],
    ks: Sequence[int],
) -> dict[int, ScopeSource]:
    """One seed's dilution points (word n-grams): each slot's text is tokenized (its
    words' bag and the bigrams across its words and its boundary) onto running sums."""
    corpus = engine.corpus
    n_words = corpus.n_words
    bag = corpus.scope_bag([carrier])
    terms = corpus.scope_terms([carrier])
    prev = corpus.last[carrier].copy()
    points: dict[int, ScopeSource] = {}
    done = 0
    for k in ks:
        for j in range(done, k):
            name = "__syn_slot"
            corpus.add_section(name, slot_texts(len(y), draws, pool, j))
            n_words = corpus.n_words
            width = corpus.tables["word"].size
            extra = corpus.bigrams_between(prev, corpus.first[name])
            parts = [corpus.xb[name], extra] + ([terms] if terms is not None else [])
            terms = sum((_widen(m, width) for m in parts[1:]), _widen(parts[0], width)).tocsr()
            bag = (_widen(bag, n_words) + _widen(corpus.bags[name], n_words)).tocsr()
            last = corpus.last[name]
            prev = np.where(last >= 0, last, prev)
            corpus.drop_sections([name])
        done = k
        points[k] = ScopeSource.from_matrices(corpus, "word", bag, terms, threads=engine.threads)
    return points


def _widen(mat: sp.csr_matrix, n_cols: int) -> sp.csr_matrix:
    return sp.csr_matrix((mat.data, mat.indices, mat.indptr), shape=(mat.shape[0], n_cols))

"""The synthetic dilution sweep's setup, shared by ``synthetic_speed.py`` and
``warm_start.py``: the controlled benchmark's corpus (char_wb 3-5), the audit's pool
(tools 1, 2 and 4, non-empty sections of the fit and eval rows), one seed's draws (fit
and eval rows drawn from separate streams, as the audit does) and the sweep's points as
word recipes (``_dilution._char_points``)."""

from __future__ import annotations

import argparse
import time
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np

CARRIER = "thermompnn_ddg"
POOL = ("cdr3b_biophysics", "mcpas_retrieval", "stability_summary")  # seed: tools 1, 2, 4
SMOKE_SCALE, SMOKE_K = 0.005, [1, 2]


def arguments(doc: str) -> argparse.Namespace:
    """The options both benchmarks take."""
    p = argparse.ArgumentParser(description=doc.splitlines()[0])
    p.add_argument("--data", default=None, help="examples.jsonl (default: generate)")
    p.add_argument("--scale", type=float, default=0.2, help="tcr-shortcut scale if no --data")
    p.add_argument("--k", type=int, nargs="+", default=[1, 2, 5, 10, 20], help="K values")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument(
        "--smoke",
        action="store_true",
        help=f"a seconds-long check that the script runs: generated data at scale "
        f"{SMOKE_SCALE}, K = {' '.join(map(str, SMOKE_K))} (its ratio means nothing)",
    )
    args = p.parse_args()
    if args.smoke:
        args.data, args.scale, args.k = None, SMOKE_SCALE, SMOKE_K
    return args


@dataclass
class Sweep:
    engine: Any
    examples: list[Any]
    y: np.ndarray
    fit: np.ndarray
    ev: np.ndarray
    pool: list[str]
    index: list[tuple[str, np.ndarray]]
    lengths: np.ndarray
    k_values: list[int]
    draws: list[tuple[np.ndarray, np.ndarray, np.ndarray]]

    def points(self) -> dict[int, Any]:
        """The sweep's points (carrier + K slots), term statistics counted."""
        from toolaudit.leakage import FEATURE_SETS
        from toolaudit.leakage._dilution import _char_points
        from toolaudit.leakage._synthetic import SlotPlanner

        planner = SlotPlanner(self.engine.corpus, self.pool, self.index)
        part = SimpleNamespace(folds=[(self.fit, self.ev)])
        spec = FEATURE_SETS["char_wb_3_5"]
        return _char_points(
            self.engine, planner, CARRIER, spec, part, self.y, self.draws, self.lengths,
            self.k_values,
        )  # fmt: skip


def load(args: argparse.Namespace) -> Sweep:
    """Read or generate the data, tokenize it, and draw one seed's slots."""
    from toolaudit.leakage import FEATURE_SETS, PT2DEngine
    from toolaudit.leakage._dilution import draw_slots
    from toolaudit.leakage._memory import return_freed_memory
    from toolaudit.leakage._tron import class_grouped

    return_freed_memory()  # as the leakage command does
    if args.data:
        from toolaudit.traces import Example, read_jsonl

        examples = list(read_jsonl(Path(args.data), Example))
    else:
        from toolaudit.datasets import make_tcr_shortcut

        examples = make_tcr_shortcut(scale=args.scale, seed=0)
    y = np.array([e.label for e in examples])
    fit = class_grouped(np.flatnonzero([e.split == "train" for e in examples]), y)
    ev = np.flatnonzero([e.split == "test" for e in examples])
    t0 = time.perf_counter()
    engine = PT2DEngine(examples, [FEATURE_SETS["char_wb_3_5"]])
    print(f"corpus: {len(examples)} rows, tokenized in {time.perf_counter() - t0:.1f} s")
    texts = engine.columns.texts
    audited = np.union1d(fit, ev)
    pool = [texts[t][i] for t in POOL for i in audited if texts[t][i]]
    index = [(t, np.asarray([i for i in audited if texts[t][i]], dtype=np.int64)) for t in POOL]
    lengths = np.array([len(s) for s in pool], dtype=np.int64)
    n = len(examples)
    k_values = sorted(set(args.k))
    streams = ((np.flatnonzero([e.split == "train" for e in examples]), 0), (ev, 1))
    draws = [
        (rows, *draw_slots(n, rows, len(pool), k_values[-1], np.random.default_rng([args.seed, s])))
        for rows, s in streams
    ]
    return Sweep(engine, examples, y, fit, ev, pool, index, lengths, k_values, draws)

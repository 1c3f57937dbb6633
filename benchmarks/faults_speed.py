"""Speed of the faults audit's per-run fixed cost: the census of every retail task.

Every run replays all 114 tasks' reference actions once, to find the paired set and the
drop-out reasons. The baseline is the way the audit used to do it: each task replayed
against a deep copy of the whole database. The audit now replays against a
copy-on-write view (a record is copied only when a write tool changes it). Both must
give the same trajectories; the script checks that and ends with

    ratio=<baseline / copy-on-write> identical=<True|False>

With ``--tasks N`` it also scores the first N qualifying tasks (all five arms, k = 0..K)
on ``--model`` twice in one sitting: with the model layer's one-trie scorer (what the
audit runs) and with the scheduling it replaced (``_old_scorer.py``: one context at a
time, an 8-state store, kept continuations run alone). It prints, for the new path,
``tokens_fed`` (body positions run), ``tokens_minimum`` (the distinct token prefixes the
requests need, counted here from the rendered texts with a hash set, independently of
the scorer), their ratio and the forward calls per decision; for both paths the wall and
CPU time; and the largest difference of any reading between them (1e-4 at most)::

    OMP_NUM_THREADS=2 python benchmarks/faults_speed.py --tasks 2 --k-max 3

The last line then reads ``tokens_ratio=... calls_per_decision=... max_row_diff=...
cpu_ratio=... wall_ratio=...`` (``--no-baseline`` skips the old path and the comparison).

``--smoke`` checks in seconds that the script runs: one census repetition, then the
model section on the first qualifying task at k = 0 with a tiny random model and the
embedded Qwen's tokenizer (``_tiny.py``) in place of ``--model``; both lines are
printed as above and the two paths must still agree, but the timings mean nothing::

    python benchmarks/faults_speed.py --smoke
"""

from __future__ import annotations

import argparse
import copy
import math
import sys
import time
from pathlib import Path
from typing import Any

from toolaudit.cli._common import default_data_root
from toolaudit.faults import FaultsConfig, domain_census
from toolaudit.faults._replay import ReplayError, Trajectory, replay
from toolaudit.faults._run import task_arms
from toolaudit.faults._scoring import Reader
from toolaudit.models._hf import HFModel
from toolaudit.traces import Domain, load_domain

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _old_scorer import OldHFModel  # noqa: E402
from _tiny import tiny_qwen  # noqa: E402

SMOKE = {"repeat": 1, "tasks": 1, "k_max": 0}


def baseline_census(domain: Domain) -> list[Trajectory | None]:
    """Every task replayed against its own deep copy of the database (the old way)."""
    out: list[Trajectory | None] = []
    for task in domain.tasks:
        db = copy.deepcopy(dict(domain.db))
        try:
            out.append(replay(task, db) if task.reference_actions else None)
        except ReplayError:
            out.append(None)
    return out


def cow_census(domain: Domain) -> list[Trajectory | None]:
    """Every task replayed on the copy-on-write view (what the audit does)."""
    out: list[Trajectory | None] = []
    for task in domain.tasks:
        try:
            out.append(replay(task, domain.db) if task.reference_actions else None)
        except ReplayError:
            out.append(None)
    return out


def minimum_tokens(requests: list[tuple[list[int], list[int]]]) -> int:
    """Distinct token prefixes the requests need run (every position whose hidden state
    or keys a scored token needs: the context and the continuation but its last token),
    counted over all requests with a set of prefix hashes."""
    seen: set[int] = set()
    for ctx, cont in requests:
        h = 0
        for tok in [*ctx, *cont][: len(ctx) + len(cont) - 1]:
            h = hash((h, tok))
            seen.add(h)
    return len(seen)


def score_tasks(lm: Any, chosen: list[Any], config: FaultsConfig, policy: str, db: Any) -> Any:
    """Every chosen task's rows on ``lm``, the token requests it sent, wall and CPU time."""
    sent: list[tuple[list[int], list[int]]] = []
    plain = lm.loglikelihood

    def recording(requests: Any) -> Any:
        sent.extend((lm.encode_context(c), lm.encode_continuation(k)) for c, k in requests)
        return plain(requests)

    lm.loglikelihood = recording
    reader = Reader.load(lm, None, policy=policy)
    _ = lm.model  # load before timing
    rows = []
    w0, c0 = time.perf_counter(), time.process_time()
    for cand in chosen:
        traj, site, payloads, _ = task_arms(cand, config, db)
        rows += reader.task_rows(traj, site, payloads, k_max=config.k_max)
    return rows, sent, time.perf_counter() - w0, time.process_time() - c0


def row_difference(a: list[dict[str, Any]], b: list[dict[str, Any]]) -> float:
    """The largest absolute difference of any numeric reading between matching rows
    (infinite when the rows or their leading actions differ)."""
    if [(r["task"], r["arm"], r["k"]) for r in a] != [(r["task"], r["arm"], r["k"]) for r in b]:
        return math.inf
    worst = 0.0
    for x, y in zip(a, b, strict=True):
        if x["leading_action"] != y["leading_action"] or x["n_tokens"] != y["n_tokens"]:
            return math.inf
        for key, v in x.items():
            if isinstance(v, float):
                worst = max(worst, abs(v - y[key]))
        for key, v in x["pi"].items():
            worst = max(worst, abs(v - y["pi"][key]))
    return worst


def model_section(args: argparse.Namespace, root: Path, domain: Domain) -> None:
    """Score ``--tasks`` tasks with the new path (and the old one) and print the figures."""
    config = FaultsConfig(data_root=str(root), k_max=args.k_max, model=args.model)
    chosen = [c for c in domain_census(domain) if c.qualifies][: args.tasks]
    name = args.model.removeprefix("embedded:")
    new_lm = tiny_qwen() if args.smoke else HFModel(f"embedded:{name}", device="cpu")
    rows, sent, wall, cpu = score_tasks(new_lm, chosen, config, domain.policy, domain.db)
    scorer = new_lm.scorer
    fed, minimum = scorer.tokens_run, minimum_tokens(sent)
    ids = " ".join(c.task_id for c in chosen)
    shown = new_lm.identity if args.smoke else args.model
    print(f"new path: tasks {ids}, k <= {args.k_max}, {len(rows)} decisions, {shown}")
    print(
        f"  tokens_fed={fed} tokens_minimum={minimum} positions_scored="
        f"{scorer.positions_scored} calls={scorer.calls} wall {wall:.1f} s cpu {cpu:.1f} s"
    )
    line = f"tokens_ratio={fed / minimum:.4f} calls_per_decision={scorer.calls / len(rows):.3f}"
    if not args.no_baseline:
        del new_lm, scorer
        if args.smoke:
            old_lm = tiny_qwen(OldHFModel)
        else:
            old_lm = OldHFModel(f"embedded:{name}", device="cpu")
        old_rows, _, old_wall, old_cpu = score_tasks(
            old_lm, chosen, config, domain.policy, domain.db
        )
        old = old_lm.scorer
        print(
            f"old path: tokens_fed={old.tokens_run} positions_scored={old.positions_scored} "
            f"calls={old.calls} wall {old_wall:.1f} s cpu {old_cpu:.1f} s"
        )
        line += (
            f" max_row_diff={row_difference(rows, old_rows):.2e}"
            f" cpu_ratio={old_cpu / cpu:.2f} wall_ratio={old_wall / wall:.2f}"
        )
    print(line)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-root", type=Path, default=None)
    parser.add_argument("--repeat", type=int, default=3, help="timed repetitions (best kept)")
    parser.add_argument("--tasks", type=int, default=0, help="also score the first N tasks")
    parser.add_argument("--k-max", type=int, default=3)
    parser.add_argument(
        "--model", choices=("embedded:qwen", "embedded:gemma"), default="embedded:qwen"
    )
    parser.add_argument("--no-baseline", action="store_true", help="skip the old path")
    parser.add_argument("--smoke", action="store_true", help="a seconds-long run (see above)")
    args = parser.parse_args()
    if args.smoke:
        vars(args).update(SMOKE)
    root = args.data_root or default_data_root()
    if root is None:
        raise SystemExit("no data root: pass --data-root (tau2/domains/retail)")
    domain = load_domain(root / "tau2" / "domains" / "retail")

    def best(fn: object) -> tuple[float, list[Trajectory | None]]:
        times, result = [], []
        for _ in range(args.repeat):
            t0 = time.process_time()
            result = fn(domain)  # type: ignore[operator]
            times.append(time.process_time() - t0)
        return min(times), result

    t_base, base = best(baseline_census)
    t_cow, cow = best(cow_census)
    t0 = time.process_time()
    census = domain_census(domain)
    t_census = time.process_time() - t0
    qualifying = sum(c.qualifies for c in census)
    print(f"baseline (deep copy per task): {t_base:.3f} s cpu for {len(domain.tasks)} tasks")
    print(f"copy-on-write:                 {t_cow:.3f} s cpu")
    print(f"full census (site rule + intent control): {t_census:.3f} s cpu, {qualifying} qualify")
    print(f"ratio={t_base / max(t_cow, 1e-9):.1f} identical={base == cow}")
    if args.tasks:
        model_section(args, root, domain)


if __name__ == "__main__":
    main()

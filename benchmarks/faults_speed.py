"""Speed of the faults audit's per-run fixed cost: the census of every retail task.

Every run replays all 114 tasks' reference actions once, to find the paired set and the
drop-out reasons. The baseline is the way the audit used to do it: each task replayed
against a deep copy of the whole database. The audit now replays against a
copy-on-write view (a record is copied only when a write tool changes it). Both must
give the same trajectories; the script checks that and ends with

    ratio=<baseline / copy-on-write> identical=<True|False>

Model scoring speed (shared-prefix reuse against the naive full forward pass) is the
model layer's job and is measured by ``benchmarks/scoring_speed.py``; with ``--task ID``
this script also times scoring one task (all five arms, k = 0..3) end to end on
``--model`` (default ``embedded:qwen``)::

    OMP_NUM_THREADS=1 python benchmarks/faults_speed.py --task 5 --k-max 3
"""

from __future__ import annotations

import argparse
import copy
import tempfile
import time
from pathlib import Path

from toolaudit.cli._common import default_data_root
from toolaudit.faults import FaultsConfig, domain_census, run_faults
from toolaudit.faults._replay import ReplayError, Trajectory, replay
from toolaudit.traces import Domain, load_domain


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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-root", type=Path, default=None)
    parser.add_argument("--repeat", type=int, default=3, help="timed repetitions (best kept)")
    parser.add_argument("--task", default=None, help="also time scoring this task id")
    parser.add_argument("--k-max", type=int, default=3)
    parser.add_argument("--model", default="embedded:qwen")
    parser.add_argument("--policy", choices=("full", "compact"), default="full")
    args = parser.parse_args()
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
    if args.task is not None:
        config = FaultsConfig(
            data_root=str(root),
            task_ids=(args.task,),
            k_max=args.k_max,
            model=args.model,
            policy=args.policy,
        )
        with tempfile.TemporaryDirectory() as tmp:
            w0, c0 = time.perf_counter(), time.process_time()
            payload = run_faults(Path(tmp), config=config)
            wall, cpu = time.perf_counter() - w0, time.process_time() - c0
        print(
            f"task {args.task}: {len(payload['rows'])} rows, five arms, k <= {args.k_max}, "
            f"{args.model}: wall {wall:.1f} s, cpu {cpu:.1f} s (model load included)"
        )
    print(f"ratio={t_base / max(t_cow, 1e-9):.1f} identical={base == cow}")


if __name__ == "__main__":
    main()

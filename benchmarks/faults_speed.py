"""Speed of the faults readings: KV-cache reuse vs the naive way, on the same tasks.

The cached way (``CachedScorer``) computes each shared prefix once, reuses its key/value
cache across arms, candidate actions and later steps, and applies the output layer only
at scored positions. The naive way (``NaiveScorer``) runs every reading as a full forward
pass from the first token with full output logits. Both produce the same rows; the script
checks that every numeric reading agrees within 1e-3 and ends with

    ratio=<naive / cached> max_abs_diff=<largest difference>

The ratio is taken over process CPU time (robust on a shared machine); wall-clock times
are printed too. Quick run::

    OMP_NUM_THREADS=1 python benchmarks/faults_speed.py --tasks 1 --arms clean failed --k-max 0 --tools 4
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from toolaudit.cli._common import default_data_root
from toolaudit.faults import (
    TOOL_SCHEMAS,
    CachedScorer,
    NaiveScorer,
    first_call_site,
    make_arms,
    task_readings,
)
from toolaudit.faults._prompt import system_segment
from toolaudit.faults._replay import ARMS, ToolStep, Trajectory
from toolaudit.faults._run import compact_policy, load_source
from toolaudit.models import load_causal_lm

NUMERIC = ("s0", "s1", "g", "entropy", "p_call", "p_reread", "p_write", "p_reply")
# Order of tools when --tools keeps a subset: the site tool and the re-read / write ones first.
PRIORITY = [
    "get_order_details",
    "get_user_details",
    "cancel_pending_order",
    "find_user_id_by_email",
]


def _tasks(data_root: Path | None, n: int) -> tuple[str, list[tuple[Trajectory, object]]]:
    policy, items, _, _ = load_source("replay", data_root)
    sel = first_call_site()
    out = []
    for item in items:
        if isinstance(item, Trajectory) and not isinstance(sel(item), str):
            out.append((item, sel(item)))
        if len(out) == n:
            break
    return policy, out


def _timed(fn):  # type: ignore[no-untyped-def]
    w, c = time.perf_counter(), time.process_time()
    result = fn()
    return result, time.perf_counter() - w, time.process_time() - c


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--tasks", type=int, default=1)
    parser.add_argument("--arms", nargs="+", default=list(ARMS))
    parser.add_argument("--k-max", type=int, default=1)
    parser.add_argument(
        "--tools", type=int, default=len(TOOL_SCHEMAS), help="candidate tools kept (>= 4)"
    )
    parser.add_argument("--policy", choices=("full", "compact"), default="compact")
    parser.add_argument("--data-root", type=Path, default=None)
    args = parser.parse_args()
    model, tok = load_causal_lm(None, device="cpu")
    policy, tasks = _tasks(args.data_root or default_data_root(), args.tasks)
    if args.policy == "compact":
        policy = compact_policy(policy)
    tools = PRIORITY + [t for t in TOOL_SCHEMAS if t not in PRIORITY]
    tools = tools[: max(4, args.tools)]
    system = system_segment(policy, tools)
    jobs = []
    for traj, site in tasks:
        step = traj.events[site.event]  # type: ignore[attr-defined]
        assert isinstance(step, ToolStep)
        payloads, _ = make_arms(
            step.content, arms=args.arms, task_id=traj.task_id, owned_payment_ids=set(), seed=0
        )
        jobs.append((traj, site, payloads))

    def run(scorer):  # type: ignore[no-untyped-def]
        rows = []
        for traj, site, payloads in jobs:
            rows += task_readings(
                traj, site, payloads, scorer=scorer, system=system, tools=tools, k_max=args.k_max
            )
        return rows

    cached_rows, cw, cc = _timed(lambda: run(CachedScorer(model, tok)))
    print(f"cached: {len(cached_rows)} rows, wall {cw:.1f} s, cpu {cc:.1f} s", flush=True)
    naive_rows, nw, nc = _timed(lambda: run(NaiveScorer(model, tok)))
    print(f"naive:  {len(naive_rows)} rows, wall {nw:.1f} s, cpu {nc:.1f} s", flush=True)
    diff = 0.0
    for a, b in zip(cached_rows, naive_rows, strict=True):
        assert (a["task"], a["arm"], a["k"]) == (b["task"], b["arm"], b["k"])
        diff = max(diff, *(abs(a[q] - b[q]) for q in NUMERIC))
    if diff > 1e-3:
        raise SystemExit(f"readings disagree: max_abs_diff={diff:.2e} > 1e-3")
    print(
        f"tasks={len(jobs)} arms={len(args.arms)} k_max={args.k_max} tools={len(tools)} wall_ratio={nw / cw:.2f}"
    )
    print(f"ratio={nc / cc:.2f} max_abs_diff={diff:.2e}")


if __name__ == "__main__":
    main()

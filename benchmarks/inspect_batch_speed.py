"""Time the scripted retail study on Inspect both ways in one run: one eval per run (the
baseline) against one eval per (policy, condition, epoch) with ``--max-samples``.

Usage: python benchmarks/inspect_batch_speed.py [--tasks 20] [--max-samples 8]
       python benchmarks/inspect_batch_speed.py --smoke     # 1 task, 2 conditions

Runs inspect_evals' tau2 retail, the first ``--tasks`` samples x the ``careful`` agent x
the five conditions, into two fresh folders, checks that both give the same records
(every field but ``source.log``), and prints one line each and
``ratio=<one-eval-per-run seconds / batched seconds> tasks=N runs=M same_records=True``.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path

from toolaudit.probes import HarnessStudyConfig, run_harness_records

CONDITIONS = ("original", "tool_rename", "reformat", "misleading_names", "repeat")


def _run(out: Path, tasks: int, conditions: tuple[str, ...], max_samples: int | None) -> float:
    config = HarnessStudyConfig(task="inspect_evals/tau2_retail", policies=("careful",),
                                conditions=conditions, limit=tasks,
                                max_samples=max_samples)  # fmt: skip
    start = time.perf_counter()
    run_harness_records(config, out)
    return time.perf_counter() - start


def _records(out: Path) -> list[dict]:
    rows = [json.loads(x) for x in (out / "records.jsonl").read_text().splitlines()]
    for r in rows:
        r["source"].pop("log")
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tasks", type=int, default=20)
    ap.add_argument("--max-samples", type=int, default=8)
    ap.add_argument("--smoke", action="store_true", help="1 task, 2 conditions")
    args = ap.parse_args()
    tasks = 1 if args.smoke else args.tasks
    conditions = CONDITIONS[:2] if args.smoke else CONDITIONS
    with tempfile.TemporaryDirectory() as tmp:
        serial = _run(Path(tmp) / "serial", tasks, conditions, None)
        batched = _run(Path(tmp) / "batched", tasks, conditions, args.max_samples)
        same = _records(Path(tmp) / "serial") == _records(Path(tmp) / "batched")
    runs = tasks * len(conditions)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"one eval per run: {serial:.1f} s ({serial / runs:.2f} s a run)")
    print(f"one eval per (policy, condition), max_samples {args.max_samples}: {batched:.1f} s "
          f"({batched / runs:.2f} s a run)")  # fmt: skip
    print(
        f"ratio={serial / batched:.3f} tasks={tasks} runs={runs} same_records={same} "
        f"load={load:.2f}"
    )


if __name__ == "__main__":
    main()

"""Time the whole controlled probe study: 25 tasks × 5 policies × 7 conditions × 3 seeds,
then every analysis (cells with task-cluster bootstraps, selection, judge audit).

Usage: python benchmarks/probe_speed.py [--n-jobs 1 [2]] [--n-boot 2000]
       python benchmarks/probe_speed.py --llm MODEL --llm-tasks 2 --llm-seeds 1 [--n-jobs 2]

With ``--llm`` it also times the ``llm`` policy driven by MODEL on the first
``--llm-tasks`` tasks × 7 conditions × ``--llm-seeds`` seed labels, and extrapolates the
measured seconds per run to the full 25 × 7 × 3 study (525 runs) at the same ``--n-jobs``.

The budget: the scripted study, run and analysed, under 10 s on 2 cores. Prints one line
per setting and the generic-vs-vectorised bootstrap comparison that motivated
``stats._paired`` (the named baseline, timed in the same run, with its ratio). Both
bootstraps draw the same clusters, so their intervals agree; the last line is
``ratio=<generic/vectorised seconds> max_ci_diff=<largest interval-end difference>``.

``--smoke`` checks in seconds that the script runs: 2 tasks, 1 seed and 100 resamples
(``python benchmarks/probe_speed.py --smoke``); its timings say nothing of the budget.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

import numpy as np

from toolaudit.probes import analyze_study, run_probe_study
from toolaudit.stats import cluster_bootstrap
from toolaudit.stats._paired import cluster_mean_bootstrap


def _study(
    n_jobs: int, n_boot: int, tasks: list[int] | None = None, n_seeds: int = 3
) -> tuple[float, float, int, float]:
    with tempfile.TemporaryDirectory() as tmp:
        c0 = time.process_time()
        t0 = time.perf_counter()
        path = run_probe_study(Path(tmp), tasks=tasks, n_seeds=n_seeds, seed=0, n_jobs=n_jobs)
        t1 = time.perf_counter()
        result = analyze_study(Path(tmp), n_boot=n_boot)
        t2 = time.perf_counter()
        cpu = time.process_time() - c0
        assert result["records"] == len(path.read_text().splitlines())
        return t1 - t0, t2 - t1, result["records"], cpu


def _bootstrap(n_boot: int) -> tuple[float, float, float]:
    """Seconds of the generic and the vectorised interval, and their largest difference."""
    rng = np.random.default_rng(0)
    clusters = [f"t{i % 25}" for i in range(75)]
    values = rng.random(75)
    t0 = time.perf_counter()
    generic = cluster_bootstrap(clusters, lambda idx: float(values[idx].mean()), n_boot=n_boot)
    t1 = time.perf_counter()
    vectorised = cluster_mean_bootstrap(clusters, values, n_boot=n_boot)
    t2 = time.perf_counter()
    diff = max(abs(generic.low - vectorised.low), abs(generic.high - vectorised.high))
    return t1 - t0, t2 - t1, diff


def _llm(model: str, tasks: int, seeds: int, n_jobs: int, temperature: float) -> None:
    from toolaudit.probes.agents._llm import llm_factory

    opts = {"model": model, "temperature": temperature, "max_steps": 10}
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        path = run_probe_study(
            Path(tmp),
            tasks=list(range(tasks)),
            n_seeds=seeds,
            policies=["llm"],
            n_jobs=n_jobs,
            agents={"llm": llm_factory(model, temperature=temperature)},
            agent_options={"llm": opts},
        )
        elapsed = time.perf_counter() - t0
        n = len(path.read_text().splitlines())
    per_run = elapsed / n
    full = 25 * 7 * 3
    print(
        f"llm ({model}, T={temperature}, n_jobs={n_jobs}): {n} runs in {elapsed:.1f} s = "
        f"{per_run:.2f} s/run (model load included); 25 tasks x 7 conditions x 3 seeds = "
        f"{full} runs -> about {per_run * full / 60:.0f} min"
    )


def main() -> None:
    """Run the benchmark and print the timings."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n-jobs", type=int, nargs="+", default=[1])
    ap.add_argument("--n-boot", type=int, default=2000)
    ap.add_argument("--llm", default=None, help="also time the llm policy with this model")
    ap.add_argument("--llm-tasks", type=int, default=2)
    ap.add_argument("--llm-seeds", type=int, default=1)
    ap.add_argument("--temperature", type=float, default=0.7)
    ap.add_argument("--smoke", action="store_true", help="a seconds-long run (see above)")
    args = ap.parse_args()
    tasks, n_seeds = ([0, 1], 1) if args.smoke else (None, 3)
    if args.smoke:
        args.n_boot = 100
    for n_jobs in args.n_jobs:
        run_s, analyze_s, n, cpu = _study(n_jobs, args.n_boot, tasks, n_seeds)
        total = run_s + analyze_s
        verdict = "OK" if total < 10 else "OVER BUDGET"
        load = os.getloadavg()[0]
        print(
            f"n_jobs={n_jobs}: {n} runs in {run_s:.2f} s, analysis (n_boot={args.n_boot}) "
            f"{analyze_s:.2f} s, total {total:.2f} s wall, {cpu:.2f} s CPU of this process "
            f"[{verdict}: budget 10 s wall; machine load average {load:.1f} on "
            f"{os.cpu_count()} cores]"
        )
    if args.llm:
        _llm(args.llm, args.llm_tasks, args.llm_seeds, args.n_jobs[-1], args.temperature)
    generic, vectorised, diff = _bootstrap(args.n_boot)
    print(
        f"one 75-row interval, n_boot={args.n_boot}: generic cluster_bootstrap {generic * 1e3:.1f} ms, "
        f"vectorised cluster_mean_bootstrap {vectorised * 1e3:.1f} ms "
        f"(ratio {generic / vectorised:.0f}x)"
    )
    print(f"ratio={generic / vectorised:.0f} max_ci_diff={diff:.3g}")


if __name__ == "__main__":
    main()

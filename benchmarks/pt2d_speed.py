"""PT2D speed: the straightforward scikit-learn pipeline vs toolaudit's engine.

Both compute the seed's scope table (full trace + every tool, x word 1-2 / char_wb 2-5 /
char_wb 3-5, balanced liblinear logistic regression, fit on train, AUROC on test, with
the audit's 95% stratified bootstrap intervals overall and per group, 2,000 resamples)
on the controlled benchmark. The baseline re-vectorizes the text of every scope and
feature set with ``TfidfVectorizer`` and bootstraps with ``roc_auc_score`` in a loop; the
engine tokenizes each distinct word once, writes each scope's design from the rows' words,
fits with its kernels on every core (one fit at a time unless ``--n-jobs``), scores the
eval rows without building them, and uses the vectorized bootstrap. Both
bootstraps use the same random draws, so their intervals agree (``max_ci_diff``). Each
pipeline runs in its own child process, so its peak memory (max RSS) is its own.
``--part all`` also runs the whole default audit (``toolaudit leakage DATA``) in a
child and prints its peak, the memory target. Besides the end-to-end ratio the script
prints the text-stage, fit-stage and interval-stage ratios separately, so nobody
mistakes which stage the speed comes from. The last line is
``ratio=<baseline/engine wall time> max_auroc_diff=<y>``, the one before it
``intervals compared: <n>, max_ci_diff=<z>``. ``--smoke`` checks in seconds that the
script still runs (scale 0.003, 68 examples, 20 resamples; the same two pipelines and
comparisons, but its ratios mean nothing at that size).

    python benchmarks/pt2d_speed.py              # the seed's size (scale 1)
    python benchmarks/pt2d_speed.py --scale 0.1  # a tenth of the seed's size (minutes, not seconds)
    python benchmarks/pt2d_speed.py --smoke      # seconds: does it still run?
    python benchmarks/pt2d_speed.py --scale 1 --part all   # plus the whole audit's peak
    python benchmarks/pt2d_speed.py --examples tcr/examples.jsonl   # reuse generated data
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np


def _load(path: Path) -> list:
    """The examples as the leakage command keeps them (prompts and message copies, which
    neither pipeline reads, are dropped on load)."""
    from toolaudit.traces import Example, read_jsonl

    return [
        Example.model_construct(id=e.id, label=e.label, group=e.group, split=e.split, tools=e.tools)
        for e in read_jsonl(path, Example)
    ]


def _split(examples: list) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    fit = np.array([i for i, e in enumerate(examples) if e.split == "train"])
    ev = np.array([i for i, e in enumerate(examples) if e.split == "test"])
    y = np.array([e.label for e in examples])
    return fit, ev, y


N_BOOT = 2000  # the audit's default resamples
SMOKE_SCALE, SMOKE_N_BOOT = 0.003, 20


def _groups_of(examples: list, ev: np.ndarray) -> np.ndarray:
    return np.array([examples[i].group for i in ev])


def straightforward_ci(
    y: np.ndarray, s: np.ndarray, seed: int = 0, n_boot: int = N_BOOT
) -> list[float]:
    """Percentile interval the straightforward way: one ``roc_auc_score`` per replicate
    (the same stratified draws as ``toolaudit.stats.bootstrap_auroc``)."""
    from sklearn.metrics import roc_auc_score

    rng = np.random.default_rng(seed)
    pos, neg = np.flatnonzero(y == 1), np.flatnonzero(y == 0)
    if pos.size == 0 or neg.size == 0:
        return [float("nan"), float("nan")]
    draw_p = rng.integers(0, pos.size, size=(n_boot, pos.size))
    draw_n = rng.integers(0, neg.size, size=(n_boot, neg.size))
    reps = []
    for b in range(n_boot):
        idx = np.concatenate([pos[draw_p[b]], neg[draw_n[b]]])
        reps.append(roc_auc_score(y[idx], s[idx]))
    return [float(q) for q in np.quantile(reps, [0.025, 0.975])]


def run_baseline(path: Path, n_jobs: int, n_boot: int = N_BOOT) -> dict:
    """TfidfVectorizer on every scope's concatenated text, then fit and score."""
    from sklearn.feature_extraction.text import TfidfVectorizer
    from threadpoolctl import threadpool_limits

    from toolaudit.leakage import FEATURE_SETS, LRSpec
    from toolaudit.stats import auroc

    examples = _load(path)
    fit, ev, y = _split(examples)
    tools = [t.name for t in examples[0].tools]
    stages = {"vectorize": 0.0, "fit_score": 0.0, "intervals": 0.0}
    aurocs, cis = {}, {}
    groups = _groups_of(examples, ev)
    for spec in FEATURE_SETS.values():
        for scope in ["full", *tools]:
            t0 = time.perf_counter()
            docs = [e.trace(tools=None if scope == "full" else [scope]) for e in examples]
            vec = TfidfVectorizer(**spec.vectorizer_kwargs())
            x_fit = vec.fit_transform([docs[i] for i in fit])
            x_ev = vec.transform([docs[i] for i in ev])
            t1 = time.perf_counter()
            # one BLAS thread, as the audit's fits: OpenBLAS splits long dot products
            # across threads, which changes liblinear's last bits (and can swap a
            # near-tied pair of scores) with the number of threads
            with threadpool_limits(limits=1, user_api="blas"):
                model = LRSpec().make().fit(x_fit, y[fit])
                scores = model.decision_function(x_ev)
            tag = f"{scope}|{spec.name}"
            aurocs[tag] = auroc(y[ev], scores)
            t2 = time.perf_counter()
            cis[tag] = straightforward_ci(y[ev], scores, n_boot=n_boot)
            for g in sorted(set(groups)):
                m = groups == g
                cis[f"{tag}|{g}"] = straightforward_ci(y[ev][m], scores[m], n_boot=n_boot)
            stages["vectorize"] += t1 - t0
            stages["fit_score"] += t2 - t1
            stages["intervals"] += time.perf_counter() - t2
            print(f"  baseline {scope} {spec.name}: {time.perf_counter() - t0:.1f}s", flush=True)
    return {"stages": stages, "aurocs": aurocs, "cis": cis}


def run_engine(path: Path, n_jobs: int, n_boot: int = N_BOOT) -> dict:
    """toolaudit's engine: tokenize once, compose scopes, fit through the audit's fit
    scheduling (``_fits.run_jobs``, as ``run_leakage`` calls it)."""
    from toolaudit.leakage import FEATURE_SETS, LRSpec, PT2DEngine
    from toolaudit.leakage._fits import run_jobs
    from toolaudit.leakage._scoring import summarize
    from toolaudit.leakage._tron import class_grouped

    examples = _load(path)
    fit, ev, y = _split(examples)
    fit_grouped = class_grouped(fit, y)  # as the audit builds its designs (see _tron)
    stages = {"tokenize": 0.0, "compose_design": 0.0, "fit_score": 0.0}
    t0 = time.perf_counter()
    engine = PT2DEngine(examples, list(FEATURE_SETS.values()))
    stages["tokenize"] = time.perf_counter() - t0
    specs = list(FEATURE_SETS.values())

    def jobs():
        for analyzer in ("word", "char_wb"):
            for scope in ["full", *engine.tools]:
                t = time.perf_counter()
                counts = engine.counts(analyzer, engine.scope_tools(scope))
                stages["compose_design"] += time.perf_counter() - t
                for spec in (s for s in specs if s.analyzer == analyzer):
                    t = time.perf_counter()
                    # the eval rows are scored after the fit, never built (as in the audit)
                    d = engine.design(counts, spec, fit_grouped, ev, lazy_eval=True)
                    stages["compose_design"] += time.perf_counter() - t
                    yield f"{scope}|{spec.name}", (d.x_fit, y[fit_grouped], d.x_eval, 0)
                    del d

    t1 = time.perf_counter()
    results = run_jobs(jobs(), LRSpec(), n_jobs=n_jobs, threads=engine.threads)
    total_jobs = time.perf_counter() - t1
    stages["fit_score"] = total_jobs - stages["compose_design"]
    t2 = time.perf_counter()
    groups = _groups_of(examples, ev)
    aurocs, cis = {}, {}
    for tag, out in results:
        summary = summarize(y[ev], out.scores, list(groups), n_boot=n_boot, seed=0)
        aurocs[tag] = summary.auroc
        cis[tag] = list(summary.ci95)
        for g, entry in summary.by_group.items():
            cis[f"{tag}|{g}"] = entry["ci95"]
    stages["intervals"] = time.perf_counter() - t2
    return {"stages": stages, "aurocs": aurocs, "cis": cis}


def run_audit(path: Path, n_jobs: int, n_boot: int = N_BOOT) -> dict:
    """The whole audit with default options (``toolaudit leakage DATA --out DIR``):
    scope table, provenance, prefix lookup, presence control, verdict, both dilution
    sweeps (K up to 20, five seeds), reading the input as the CLI does."""
    from toolaudit.cli.main import main as cli

    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="pt2d-audit-") as tmp:
        out = Path(tmp)
        code = cli(["leakage", str(path), "--out", str(out), "--n-boot", str(n_boot)])
        doc = json.loads((out / "leakage.json").read_text()) if code == 0 else {}
    return {
        "stages": {"audit": time.perf_counter() - t0},
        "exit": code,
        "verdict": (doc.get("verdict") or {}).get("kind"),
        "aurocs": {f"{r['scope']}|{r['features']}": r["auroc"] for r in doc.get("scopes", [])},
    }


def _child(part: str, path: Path, n_jobs: int, n_boot: int, out: Path) -> None:
    t0 = time.perf_counter()
    runner = {"baseline": run_baseline, "engine": run_engine, "audit": run_audit}[part]
    res = runner(path, n_jobs, n_boot)
    res["wall"] = time.perf_counter() - t0
    res["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    out.write_text(json.dumps(res))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=float, default=1.0, help="controlled benchmark scale")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--n-boot", type=int, default=N_BOOT, help=f"bootstrap resamples (default {N_BOOT})"
    )
    parser.add_argument(
        "--smoke",
        action="store_true",
        help=f"a check that the script runs, in seconds: --scale {SMOKE_SCALE} "
        f"--n-boot {SMOKE_N_BOOT} (its figures mean nothing)",
    )
    parser.add_argument(
        "--n-jobs",
        type=int,
        default=1,
        help="engine fits in parallel (default 1: each fit already runs on every core)",
    )
    parser.add_argument(
        "--part",
        choices=["both", "baseline", "engine", "audit", "all"],
        default="both",
        help="both = baseline and engine scope tables; audit = the whole default audit "
        "(its peak is the memory target); all = the three",
    )
    parser.add_argument(
        "--examples",
        type=Path,
        default=None,
        help="an examples.jsonl written by `toolaudit datasets make tcr-shortcut` at this "
        "--scale and --seed, instead of generating it here (the generator takes about 8 "
        "minutes at scale 1)",
    )
    parser.add_argument("--data", type=Path, default=None, help=argparse.SUPPRESS)
    parser.add_argument("--result", type=Path, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.smoke:
        args.scale, args.n_boot = SMOKE_SCALE, SMOKE_N_BOOT
    if args.result is not None:  # child process
        _child(args.part, args.data, args.n_jobs, args.n_boot, args.result)
        return 0
    from toolaudit.datasets import make_tcr_shortcut
    from toolaudit.traces import write_jsonl

    with tempfile.TemporaryDirectory() as tmp:
        t = time.perf_counter()
        if args.examples is not None:
            if not args.examples.is_file():
                parser.error(f"--examples: {args.examples} is not a file")
            data = args.examples
            examples = _load(data)
        else:
            data = Path(tmp) / "examples.jsonl"
            examples = make_tcr_shortcut(scale=args.scale, seed=args.seed)
            write_jsonl(data, examples)
        n_chars = sum(len(s.content) for e in examples for s in e.tools)
        print(
            f"controlled benchmark scale={args.scale}: {len(examples)} examples, "
            f"{n_chars / 1e6:.1f}M characters of tool text ({time.perf_counter() - t:.0f}s to "
            f"{'read ' + str(data) if args.examples else 'make'})"
        )
        del examples
        res = {}
        parts = {"both": ["engine", "baseline"], "all": ["audit", "engine", "baseline"]}.get(
            args.part, [args.part]
        )
        for part in parts:
            out = Path(tmp) / f"{part}.json"
            cmd = [
                sys.executable,
                __file__,
                "--part",
                part,
                "--data",
                str(data),
                "--result",
                str(out),
                "--n-jobs",
                str(args.n_jobs),
                "--n-boot",
                str(args.n_boot),
            ]
            subprocess.run(cmd, check=True)
            res[part] = json.loads(out.read_text())
            r = res[part]
            stages = ", ".join(f"{k} {v:.1f}s" for k, v in r["stages"].items())
            print(
                f"{part}: wall {r['wall']:.1f}s ({stages}); peak RSS {r['peak_rss_mb']:.0f} MB",
                flush=True,
            )
    if "baseline" not in res or "engine" not in res:
        return 0
    b, e = res["baseline"], res["engine"]
    text_b = b["stages"]["vectorize"]
    text_e = e["stages"]["tokenize"] + e["stages"]["compose_design"]
    print(
        f"peaks: baseline {b['peak_rss_mb']:.0f} MB, engine {e['peak_rss_mb']:.0f} MB"
        + (f", whole audit {res['audit']['peak_rss_mb']:.0f} MB" if "audit" in res else "")
    )
    print(
        f"text_ratio={text_b / max(text_e, 1e-9):.2f} (vectorize {text_b:.1f}s vs tokenize+"
        f"compose+design {text_e:.1f}s) fit_ratio="
        f"{b['stages']['fit_score'] / max(e['stages']['fit_score'], 1e-9):.2f} "
        f"interval_ratio={b['stages']['intervals'] / max(e['stages']['intervals'], 1e-9):.1f}"
    )
    diffs = [
        abs(res["baseline"]["aurocs"][k] - res["engine"]["aurocs"][k])
        for k in res["baseline"]["aurocs"]
    ]
    for k in sorted(res["baseline"]["aurocs"]):
        print(
            f"  {k:40s} baseline {res['baseline']['aurocs'][k]:.6f} engine {res['engine']['aurocs'][k]:.6f}"
        )
    ci_diffs = [
        abs(a - b)
        for k, ci in res["baseline"]["cis"].items()
        for a, b in zip(ci, res["engine"]["cis"][k], strict=True)
        if a is not None and b is not None and not (np.isnan(a) and np.isnan(b))
    ]
    print(f"intervals compared: {len(ci_diffs) // 2}, max_ci_diff={max(ci_diffs):.3g}")
    ratio = res["baseline"]["wall"] / res["engine"]["wall"]
    print(f"ratio={ratio:.2f} max_auroc_diff={max(diffs):.3g}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

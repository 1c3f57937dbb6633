"""``toolaudit leakage``: the PT2D audit (per-tool TF-IDF decomposition) on a data file."""

from __future__ import annotations

import argparse
import logging
from pathlib import Path
from typing import Any

from toolaudit.cli._common import (
    add_fail_on,
    add_mapping_option,
    add_parser,
    gate_exit,
    load_mapping,
    print_json,
    progress,
)
from toolaudit.cli._validate import output_dir, positive_int, seed
from toolaudit.report import visible, with_fallbacks

logger = logging.getLogger(__name__)


def register(sub: Any) -> None:
    """Add the ``leakage`` subcommand."""
    p = add_parser(
        sub,
        "leakage",
        help="localize label shortcuts in tool traces (PT2D: per-tool TF-IDF decomposition)",
        example="toolaudit leakage examples.jsonl --out leak-out --fit split=train --eval split=test",
    )
    p.add_argument(
        "data",
        type=Path,
        nargs="+",
        help="Example JSONL, or tau2-bench / tau-bench results file(s); several files are pooled",
    )
    p.add_argument(
        "--out", type=output_dir, required=True, help="output folder (leakage.json, report)"
    )
    p.add_argument("--fit", default=None, help="fit partition, e.g. split=train or group=C0")
    p.add_argument("--eval", default=None, help="eval partition, e.g. split=test or group=C1,C2")
    p.add_argument(
        "--cv-folds",
        type=int,
        default=5,
        help="grouped CV folds for a single pool (with a fit/eval partition it is not used, "
        "and a warning says so)",
    )
    p.add_argument(
        "--features",
        nargs="+",
        default=None,
        metavar="NAME",
        help="feature sets: word_1_2 char_wb_2_5 char_wb_3_5 (default: all three)",
    )
    p.add_argument("--scopes", nargs="+", default=None, help="scopes: full and/or tool names")
    p.add_argument(
        "--max-features",
        nargs="+",
        default=None,
        metavar="NAME=N",
        help="override max_features per feature set, e.g. char_wb_3_5=20000",
    )
    p.add_argument(
        "--min-df", type=positive_int, default=None, help="override min_df for every feature set"
    )
    p.add_argument("--n-boot", type=int, default=2000, help="bootstrap resamples (default 2000)")
    p.add_argument("--seed", type=seed, default=0, help="seed of bootstrap and synthetic dilution")
    p.add_argument("--n-jobs", type=int, default=1, help="parallel fits (joblib; -1 = all cores)")
    p.add_argument(
        "--threads",
        type=int,
        default=0,
        help="threads of the engine's kernels and of each fit (default 0 = every core; "
        "the results are the same for any number)",
    )
    p.add_argument(
        "--backend",
        default=None,
        help="local joblib backend: threading (default), loky, sequential",
    )
    p.add_argument(
        "--scheduler",
        default=None,
        metavar="ADDRESS|local",
        help="run the fits and dilution sweeps on Dask distributed: 'local' starts a "
        "LocalCluster, an address (tcp://host:8786) joins a running one "
        "(needs pip install 'toolaudit[dask]')",
    )
    p.add_argument(
        "--dilution",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="run the dilution sweeps (default on)",
    )
    p.add_argument("--carrier", default=None, help="dilution carrier tool (default: best tool)")
    p.add_argument("--dilution-k", type=int, nargs="+", default=[0, 1, 2, 5, 10, 20])
    p.add_argument("--dilution-seeds", type=int, default=5)
    p.add_argument(
        "--prefix-class",
        default=None,
        help="token class (name or regex with one group) for the prefix lookup",
    )
    p.add_argument(
        "--threshold",
        type=float,
        default=1.0,
        help="reward threshold for label=1 when DATA holds agent runs (1.0: tau2-bench's "
        "success, full reward, as in traces convert)",
    )
    add_mapping_option(p)
    add_fail_on(p, LEAKAGE_GATES)
    p.add_argument("--json", action="store_true", help="print the scope table as JSON")
    p.set_defaults(func=run, config_replay=replay_features)


#: The leakage verdicts a ``--fail-on`` gate can name (``VERDICT_KINDS``).
LEAKAGE_GATES = {
    "localized": "one tool's return carries the labels (a shortcut to redact)",
    "distributed": "the labels are predictable from the whole trace, no tool stands out",
    "none": "no scope ranks the labels above chance",
    "inconclusive": "above chance somewhere, not located at this sample size",
}


def _check_int(name: str, value: int, *, low: int, allowed: str) -> None:
    from toolaudit.errors import ConfigError

    if value < low:
        raise ConfigError.invalid(name, allowed, value)


def _validate(args: argparse.Namespace) -> None:
    """The options checked here rather than in ``LeakageConfig`` (which checks every value
    it holds on construction): the scheduler's extra, ``--min-df`` and ``--threshold``."""
    import math

    from toolaudit.errors import ConfigError
    from toolaudit.leakage import require_distributed

    if args.scheduler is not None:
        require_distributed()  # a missing extra is exit 2 with the pip line, before any work
    if args.min_df is not None:
        _check_int("min-df", args.min_df, low=1, allowed="an integer >= 1")
    if not math.isfinite(args.threshold):
        raise ConfigError.invalid(
            "threshold", "a finite number (reward >= threshold is 1)", args.threshold
        )


def _config(args: argparse.Namespace) -> Any:
    from toolaudit.errors import ConfigError
    from toolaudit.leakage import FEATURE_SETS, DilutionConfig, LeakageConfig, feature_specs

    _validate(args)
    specs = feature_specs(args.features)
    overrides: dict[str, int] = {}
    for item in args.max_features or []:
        name, _, value = item.partition("=")
        if name not in FEATURE_SETS or not value.isdigit() or int(value) < 1:
            raise ConfigError.invalid(
                "max-features", f"NAME=N with NAME in {', '.join(FEATURE_SETS)} and N >= 1", item
            )
        overrides[name] = int(value)
    specs = [
        type(s)(
            s.name,
            s.analyzer,
            s.ngram_range,
            overrides.get(s.name, s.max_features),
            args.min_df if args.min_df is not None else s.min_df,
            s.max_df,
        )
        for s in specs
    ]
    dilution = (
        DilutionConfig(
            carrier=args.carrier, k_values=tuple(args.dilution_k), n_seeds=args.dilution_seeds
        )
        if args.dilution
        else None
    )
    return LeakageConfig(
        features=tuple(specs),
        scopes=tuple(args.scopes) if args.scopes else None,
        fit=args.fit,
        eval=args.eval,
        cv_folds=args.cv_folds,
        n_boot=args.n_boot,
        seed=args.seed,
        n_jobs=args.n_jobs,
        threads=args.threads,
        backend=args.backend,
        scheduler=args.scheduler,
        dilution=dilution,
        prefix_class=args.prefix_class,
    )


def run(args: argparse.Namespace) -> int:
    """Run the audit and write ``leakage.json``, ``report.md`` and ``report.html``."""
    from toolaudit.audits import run_audit
    from toolaudit.errors import ConfigError
    from toolaudit.leakage import (
        LeakageAuditConfig,
        LeakageResults,
        below_chance_note,
        leakage_sections,
        return_freed_memory,
    )
    from toolaudit.report import Finding, write_report

    try:
        cfg = _config(args)
    except ConfigError as exc:  # the config names its field; the user typed the option
        raise exc.for_option() from None
    return_freed_memory()  # freed block arrays leave the resident set at once
    config = LeakageAuditConfig(
        leakage=cfg,
        files=tuple(args.data),
        threshold=args.threshold,
        mapping=load_mapping(args),
        command="toolaudit leakage",
    )
    try:
        with progress("leakage") as cb:
            result = run_audit("leakage", args.out, config=config, progress=cb)
    except ConfigError as exc:  # an unknown carrier, found once the files are read
        raise exc.for_option({"carrier": "--carrier"}) from None
    assert isinstance(result, LeakageResults)
    path = args.out / result.results_file
    doc = result.model_dump(mode="python", exclude_unset=True)
    write_report(args.out, "toolaudit leakage",
                 with_fallbacks(leakage_sections(doc), result.fallbacks, title="Leakage"))  # fmt: skip
    for w in result.warnings:
        logger.warning("%s", visible(w))
    verdict = result.verdict or {}
    if args.json:
        print_json(
            {
                "scopes": doc["scopes"],
                "verdict": doc["verdict"],
                "warnings": doc["warnings"],
                "path": str(path),
            }
        )
    else:
        print(visible(verdict["sentence"]))
        below = below_chance_note(Finding.model_validate(verdict["evidence"]))
        if below:
            print(visible(below))
        print(f"wrote {visible(str(path))}")
        for f in dict.fromkeys(r.features for r in result.scopes):
            # scope names are tool names from the trace: shown as text, controls visible
            cells = [
                f"{visible(r.scope)}=" + ("undefined" if r.auroc is None else f"{r.auroc:.3f}")
                for r in result.scopes
                if r.features == f
            ]
            print(f"  {f}: " + ", ".join(cells))
    return gate_exit(args, [verdict["kind"]])


def replay_features(config: dict[str, Any], path: Path) -> dict[str, Any]:
    """A ``--config`` replay's options from the recorded feature sets: the records are
    replayed by name, so a ``min_df`` or ``max_features`` that differs from the set's
    default (``--min-df``, ``--max-features``) is turned back into its option."""
    from toolaudit.leakage import FEATURE_SETS

    records = config.get("features")
    if not isinstance(records, list) or not all(isinstance(r, dict) for r in records):
        return config
    out = dict(config)
    min_dfs = {
        r.get("min_df") for r in records if r.get("name") in FEATURE_SETS
        and r.get("min_df") != FEATURE_SETS[r["name"]].min_df
    }  # fmt: skip
    if len(min_dfs) == 1 and "min_df" not in config:
        out["min_df"] = min_dfs.pop()
    caps = [
        f"{r['name']}={r['max_features']}"
        for r in records
        if r.get("name") in FEATURE_SETS
        and r.get("max_features") is not None
        and r.get("max_features") != FEATURE_SETS[r["name"]].max_features
    ]
    if caps and "max_features" not in config:
        out["max_features"] = caps
    return out

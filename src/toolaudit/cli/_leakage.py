"""``toolaudit leakage``: the PT2D audit (per-tool TF-IDF decomposition) on a data file."""

from __future__ import annotations

import argparse
import logging
from pathlib import Path
from typing import Any

from toolaudit.cli._common import (
    add_mapping_option,
    add_parser,
    load_mapping,
    print_json,
    progress,
)
from toolaudit.cli._validate import output_dir, positive_int, seed
from toolaudit.report import visible

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
    p.add_argument("--cv-folds", type=int, default=5, help="grouped CV folds for a single pool")
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
    p.add_argument("--n-jobs", type=int, default=1, help="parallel fits (joblib)")
    p.add_argument(
        "--backend",
        default=None,
        help="joblib backend: loky, threading, multiprocessing, dask, ray, ...",
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
        help="reward threshold for label=1 when DATA holds agent runs",
    )
    add_mapping_option(p)
    p.add_argument("--json", action="store_true", help="print the scope table as JSON")
    p.set_defaults(func=run)


def _config(args: argparse.Namespace) -> Any:
    from toolaudit.errors import ConfigError
    from toolaudit.leakage import DilutionConfig, LeakageConfig, feature_specs

    specs = feature_specs(args.features)
    overrides: dict[str, int] = {}
    for item in args.max_features or []:
        name, _, value = item.partition("=")
        if not value.isdigit():
            raise ConfigError.invalid("max-features", "NAME=N", item)
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
        backend=args.backend,
        dilution=dilution,
        prefix_class=args.prefix_class,
    )


def run(args: argparse.Namespace) -> int:
    """Run the audit and write ``leakage.json``, ``report.md`` and ``report.html``."""
    from toolaudit.errors import ConfigError, DataError
    from toolaudit.leakage import leakage_sections, run_leakage, write_leakage
    from toolaudit.report import run_metadata, write_report
    from toolaudit.traces import Example, load_examples

    cfg = _config(args)
    mapping = load_mapping(args)
    examples: list[Any] = []
    for path in args.data:
        if not path.exists():
            raise DataError(f"{path}: no such file")
        # keep only what the audit reads: prompts and message copies can be large
        examples.extend(
            Example.model_construct(
                id=e.id, label=e.label, group=e.group, split=e.split, tools=e.tools
            )
            for e in load_examples(path, threshold=args.threshold, mapping=mapping)
        )
    tool_names = sorted({t.name for e in examples for t in e.tools})
    if args.dilution and args.carrier is not None and args.carrier not in tool_names:
        # checked before the audit runs: the dilution sweep needs it only at the end
        raise ConfigError.invalid("--carrier", tool_names, args.carrier)
    with progress("leakage") as cb:
        result = run_leakage(examples, cfg, progress=cb)
    payload = result.as_json()
    payload["data"] = {"files": [p.name for p in args.data], "examples": len(examples)}
    meta = run_metadata(command="toolaudit leakage", seed=args.seed, config=cfg.as_json())
    path = write_leakage(args.out, payload, meta=meta)
    write_report(args.out, "toolaudit leakage", leakage_sections(payload))
    for w in result.warnings:
        logger.warning("%s", visible(w))
    if args.json:
        print_json(
            {"scopes": payload["scopes"], "warnings": payload["warnings"], "path": str(path)}
        )
    else:
        print(f"wrote {visible(str(path))}")
        for f in dict.fromkeys(r.features for r in result.scopes):
            table = result.table(f)
            # scope names are tool names from the trace: shown as text, controls visible
            print(f"  {f}: " + ", ".join(f"{visible(s)}={a:.3f}" for s, a in table.items()))
    return 0

"""``toolaudit datasets``: generate controlled benchmarks (``make``) and list them."""

from __future__ import annotations

import argparse
from typing import Any

from toolaudit.cli._common import add_parser, print_json, progress
from toolaudit.cli._validate import output_dir, seed
from toolaudit.report import visible

GENERATORS = ("tcr-shortcut",)


def register(sub: Any) -> None:
    """Add ``datasets make`` and ``datasets list``."""
    parser = add_parser(
        sub,
        "datasets",
        help="generate controlled benchmarks with a known, planted shortcut",
        example="toolaudit datasets make tcr-shortcut --out data/tcr --scale 0.1 --seed 0",
    )
    inner = parser.add_subparsers(dest="datasets_command", metavar="ACTION")
    make = add_parser(
        inner,
        "make",
        help="write DIR/examples.jsonl and DIR/dataset.json",
        example="toolaudit datasets make tcr-shortcut --out data/tcr --scale 0.1 --seed 0",
    )
    make.add_argument("name", choices=GENERATORS, help="which benchmark to generate")
    make.add_argument("--out", type=output_dir, required=True, help="output folder DIR")
    make.add_argument(
        "--scale",
        type=str,
        default="1.0",
        help="multiple of the seed's counts, in (0, 4]; every cluster keeps both classes "
        "(default 1: exactly the seed's Table 2; 2 doubles every count)",
    )
    make.add_argument("--seed", type=seed, default=0, help="random seed, >= 0 (default 0)")
    make.add_argument(
        "--strength",
        type=str,
        default=None,
        help="log-odds strength of the planted id shortcut, in [0, 8] (default "
        "the seed-calibrated value; 0 plants nothing). A non-default value is a relaxed "
        "parameter: record it as a fallback where results are reported",
    )
    make.add_argument(
        "--cluster-strength",
        default=None,
        help="per-cluster multipliers of the strength: 'seed' (the seed's heterogeneity, "
        "calibrated to its Table 6: weak in C1 and C3, none in C5), 'default', or "
        "CLUSTER=MULTIPLIER,... such as C5=0 (the others as by default)",
    )
    make.add_argument("--json", action="store_true", help="print the counts as JSON")
    make.set_defaults(func=_make)
    listing = add_parser(
        inner, "list", help="list the available generators", example="toolaudit datasets list"
    )
    listing.add_argument("--json", action="store_true", help="print as JSON")
    listing.set_defaults(func=_list)

    def _usage(args: argparse.Namespace) -> int:
        parser.print_help()
        return 2

    parser.set_defaults(func=_usage)


def _make(args: argparse.Namespace) -> int:
    from toolaudit.datasets import (
        STRENGTH,
        DatasetManifest,
        parse_cluster_strength,
        validate_scale,
        validate_strength,
        write_tcr_shortcut,
    )

    scale = validate_scale(args.scale)
    strength = STRENGTH if args.strength is None else validate_strength(args.strength)
    clusters = (
        None if args.cluster_strength is None else parse_cluster_strength(args.cluster_strength)
    )
    with progress(f"generating {args.name}") as cb:
        path = write_tcr_shortcut(args.out, scale=scale, seed=args.seed, strength=strength,
                                  cluster_strength=clusters, progress=cb)  # fmt: skip
    manifest = DatasetManifest.model_validate_json(
        (path.parent / "dataset.json").read_text(encoding="utf-8")
    )
    if args.json:
        print_json({"path": str(path), **manifest.model_dump()})
        return 0
    from rich.console import Console
    from rich.table import Table

    table = Table(
        title=f"{manifest.name} (seed {manifest.seed}, scale {manifest.scale:g}, "
        f"strength {manifest.strength:g})"
    )
    for col in ("group", "split", "total", "positives", "negatives"):
        table.add_column(col, justify="left" if col in ("group", "split") else "right")
    for cell in manifest.cells:
        table.add_row(
            *(str(cell[k]) for k in ("group", "split", "total", "positives", "negatives"))
        )
    table.add_row(
        "all",
        "",
        str(manifest.examples),
        str(manifest.positives),
        str(manifest.examples - manifest.positives),
    )
    console = Console(width=100)
    console.print(table)
    # the path is the user's text: printed as text, never as rich markup
    console.print(f"wrote {visible(str(path))}", markup=False, highlight=False)
    return 0


def _list(args: argparse.Namespace) -> int:
    from toolaudit.datasets import DATASETS

    if args.json:
        print_json({"datasets": [{"name": k, "description": v} for k, v in DATASETS.items()]})
        return 0
    for name, description in DATASETS.items():
        print(f"{name}: {description}")
    return 0

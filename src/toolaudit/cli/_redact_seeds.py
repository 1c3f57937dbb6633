"""``toolaudit redact-seeds``: redaction results across training seeds, beside the seed's
Table 8."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from toolaudit.cli._common import add_parser, print_json
from toolaudit.cli._validate import output_dir
from toolaudit.report import visible


def register(sub: Any) -> None:
    """Add the ``redact-seeds`` subcommand."""
    p = add_parser(
        sub,
        "redact-seeds",
        help="summarise redaction runs of models trained with different seeds (mean, spread, "
        "a verdict per class that holds across seeds)",
        example="toolaudit redact-seeds results/redact-lm-partial/str2/seed*/redaction "
        "--baseline results/redact-lm-partial/str2/no-trace --out out/seeds",
        description="Groups the runs by the data they scored (redaction.json's input digest) "
        "and reports, per dataset, each variant's AUROC and ΔA as mean ± sd [min, max] "
        "across the runs, per cluster, every run's own 95%% interval, and a verdict per "
        "class: 'drops on every seed' when every run's ΔA interval lies above 0, 'no drop "
        "on any seed' when every one holds 0, else 'differs across seeds'. The seed's "
        "Table 8 is printed beside. Writes DIR/redaction_seeds.json and DIR/summary.md; no "
        "model is called.",
    )
    p.add_argument("runs", nargs="+", type=Path, help="redaction folders (or redaction.json)")
    p.add_argument("--baseline", action="append", type=Path, default=[],
                   help="a no-evidence model folder (training.json; repeatable)")  # fmt: skip
    p.add_argument("--out", type=output_dir, required=True, help="output folder")
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from toolaudit.redaction import redaction_seeds, seeds_markdown
    from toolaudit.report import write_results

    summary = redaction_seeds(args.runs, baselines=args.baseline)
    args.out.mkdir(parents=True, exist_ok=True)
    write_results(args.out / "redaction_seeds.json", summary)
    (args.out / "summary.md").write_text(seeds_markdown(summary) + "\n", encoding="utf-8")
    if args.json:
        print_json(summary)
        return 0
    for ds in summary["datasets"]:
        sys.stdout.write(f"{visible(ds['data'])}: {ds['n_runs']} runs\n")
        for v in ds["variants"]:
            a = v["auroc"]
            spread = f" ± {a['sd']:.4f}" if a["sd"] is not None else ""
            verdict = f"  {v['verdict']}" if "verdict" in v else ""
            sys.stdout.write(f"  {visible(v['name']):<10} AUROC {a['mean']:.4f}{spread}{verdict}\n")
    sys.stdout.write(f"wrote {visible(str(args.out / 'summary.md'))}\n")
    return 0

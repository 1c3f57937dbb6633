"""``toolaudit redact``: token-class redaction with frozen-model re-evaluation."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from toolaudit.cli._common import (
    add_mapping_option,
    add_parser,
    load_mapping,
    print_json,
    progress,
)
from toolaudit.cli._validate import int_at_least, output_dir, output_file, positive_int, seed
from toolaudit.errors import ConfigError
from toolaudit.report import visible, with_fallbacks


def register(sub: Any) -> None:
    """Add the ``redact`` subcommand."""
    p = add_parser(
        sub,
        "redact",
        help="redact token classes from every prompt-bearing field and re-evaluate a frozen model",
        example=(
            "toolaudit redact tcr/examples.jsonl --out red --model sklearn:frozen.joblib "
            "--class pdb_id --class peptide --class format"
        ),
        description=(
            "Stage 2 of the leakage audit (seed: Token-Class Redaction). Each token class is "
            "redacted on its own from the prompt, every message, every tool section, the "
            "fields and every string under meta, with a class-specific placeholder; a "
            "class whose redacted values survive anywhere (the residual check) is not "
            "scored but reported as refused; a run whose every class is refused fails and "
            "writes nothing. The same frozen model then scores the same rows for every variant. Writes DIR/redaction.json "
            "(variants with AUROC, ΔA and its paired bootstrap interval, per-group AUROC, "
            "replacement counts, residuals, validity) and DIR/scores.jsonl. Responses are "
            "cached (default DIR/cache.sqlite), so an interrupted run resumes and a rerun "
            "makes zero model calls. Class specs: NAME (built-in: pdb_id, peptide, format, "
            "uniprot, uuid, hex_digest, file_path, version, date, numeric_id, email, secret) "
            "or NAME=KIND:ARG with KIND regex (one capture group), field (key: value and JSON "
            "keys), record (dotted path such as meta.pdb_id) or detector; repeat a NAME to add "
            "sources. Default: pdb_id, peptide and format on the controlled benchmark, else "
            "every built-in detector class and format."
        ),
    )
    p.add_argument(
        "data",
        type=Path,
        help="examples.jsonl (or a folder holding it); any JSONL with --mapping",
    )
    add_mapping_option(p)
    p.add_argument("--out", type=output_dir, required=True, help="output folder")
    p.add_argument(
        "--model",
        required=True,
        help="model spec: sklearn:FILE | embedded | hf:PATH_OR_ID | llama:qwen | "
        "openai:MODEL@URL | py:module:function; backend options as ,KEY=VALUE",
    )
    p.add_argument(
        "--class",
        dest="classes",
        action="append",
        default=[],
        metavar="SPEC",
        help="token class: NAME (built-in, or a --class-from candidate) or NAME=KIND:ARG "
        "(repeatable)",
    )
    p.add_argument(
        "--class-from",
        type=Path,
        default=None,
        metavar="LEAKAGE_JSON",
        help="also test the candidate classes in leakage.json 'provenance' (file or folder): "
        "all of them, or only those named with --class NAME",
    )
    p.add_argument(
        "--eval",
        action="append",
        default=[],
        metavar="KEY=VALUE[,VALUE]",
        help="evaluation rows (split, group or id); default split=test when rows carry it",
    )
    p.add_argument(
        "--scoring",
        choices=["options", "yesno", "generate"],
        default="options",
        help="options: expected answer over 1..10 from log-probabilities (default); yesno: "
        "P(yes); generate: greedy <answer> parsing",
    )
    p.add_argument(
        "--cache", type=output_file, default=None, help="SQLite cache (DIR/cache.sqlite)"
    )
    p.add_argument(
        "--limit",
        type=int_at_least(2),
        default=None,
        help="seeded, label-balanced subsample of N >= 2 rows",
    )
    p.add_argument(
        "--keep-tools",
        default=None,
        metavar="NAME[,NAME]",
        help="shorten prompts for slow models: empty every other tool section in every "
        "prompt-bearing field (before redaction, so all variants see the same rows)",
    )
    p.add_argument(
        "--max-tool-lines",
        type=positive_int,
        default=None,
        metavar="N",
        help="shorten prompts: keep the first N lines of each tool section",
    )
    p.add_argument("--seed", type=seed, default=0, help="seed of sampling and bootstrap (0)")
    p.add_argument(
        "--n-boot", type=positive_int, default=2000, help="bootstrap replicates, >= 1 (2000)"
    )
    p.add_argument(
        "--batch-rows", type=positive_int, default=8, help="rows per model call, >= 1 (8)"
    )
    p.add_argument(
        "--chat",
        action="store_true",
        help="score each prompt as one user turn in the model's chat template (any model "
        "that renders a chat)",
    )
    p.add_argument("--json", action="store_true", help="print redaction.json on stdout")
    p.set_defaults(func=run, config_replay=_replay_eval)


def _eval_filter(specs: list[str]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for spec in specs:
        key, sep, values = spec.partition("=")
        if not sep or not values:
            raise ConfigError.invalid("--eval", "KEY=VALUE[,VALUE]", spec)
        out.setdefault(key.strip(), []).extend(v.strip() for v in values.split(","))
    return out


def run(args: argparse.Namespace) -> int:
    """Run the audit and write ``DIR/redaction.json``."""
    import json

    from toolaudit.audits import run_audit
    from toolaudit.redaction import (
        RedactionResults,
        RedactionStudyConfig,
        classes_from_leakage,
        report_sections,
        select_classes,
    )
    from toolaudit.report import write_report

    mined = classes_from_leakage(args.class_from) if args.class_from is not None else []
    classes = select_classes(args.classes, mined)
    try:
        config = RedactionStudyConfig(
            data=args.data,
            model=args.model,
            classes=tuple(classes),
            eval=_eval_filter(args.eval) if args.eval else None,
            mapping=load_mapping(args),
            scoring=args.scoring,
            limit=args.limit,
            n_boot=args.n_boot,
            seed=args.seed,
            chat=bool(args.chat),
            keep_tools=tuple(t.strip() for t in args.keep_tools.split(","))
            if args.keep_tools
            else None,
            max_tool_lines=args.max_tool_lines,
            cache=args.cache,
            batch_rows=args.batch_rows,
        )
    except ConfigError as exc:  # the config names its field; the user typed the option
        raise exc.for_option() from None
    with progress("redaction") as cb:
        result = run_audit("redaction", args.out, config=config, progress=cb)
    assert isinstance(result, RedactionResults)
    out = args.out / result.results_file
    sections = with_fallbacks(report_sections(result), result.fallbacks, title="Redaction")
    write_report(args.out, "toolaudit redaction audit", sections)
    calls = result.run_calls
    assert calls is not None  # a result this process ran carries its call counts
    if args.json:
        # the results file, plus this invocation's call counters (kept out of the file)
        print_json({**json.loads(out.read_text(encoding="utf-8")), "run": {"calls": calls}})
    else:
        for v in result.variants:
            delta = "" if v.delta is None else f"  ΔA {v.delta:+.4f}"
            auroc = "undefined" if v.auroc is None else f"{v.auroc:.4f}"
            valid = "undefined" if v.valid_rate is None else f"{v.valid_rate:.2f}"
            sys.stdout.write(
                f"{visible(v.name):>12}: AUROC {auroc}{delta}  replacements {v.replacements}  "
                f"valid {valid}\n"
            )
        refused = result.residual_check.get("refused") or {}
        for name, count in refused.items():
            sys.stdout.write(
                f"{visible(name):>12}: not scored: {count} occurrences of its redacted values "
                "survive redaction (recorded as a skipped_part fallback)\n"
            )
        sys.stdout.write(
            f"calls: {calls['made']} made, {calls['cached']} cached; wrote {visible(str(out))}\n"
        )
    return 0


def _replay_eval(config: dict[str, Any], path: Path) -> dict[str, Any]:
    """A ``--config`` replay's ``--eval``: the recorded filter (``{"split": ["test"]}``)
    as the option's ``KEY=VALUE[,VALUE]`` texts."""
    recorded = config.get("eval")
    if not isinstance(recorded, dict):
        return config
    specs = []
    for key, values in recorded.items():
        if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
            raise ConfigError(
                f"{path}, field 'meta.config.eval.{key}': expected a list of strings, "
                f"got {values!r}"
            )
        specs.append(f"{key}={','.join(values)}")
    return {**config, "eval": specs}

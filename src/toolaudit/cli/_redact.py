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
from toolaudit.errors import ConfigError, DataError, TraceFormatError
from toolaudit.report import visible, with_fallbacks
from toolaudit.runs import append_run_log, check_run_config, exclusive, write_run_config


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
            "residual check fails the run if any redacted value survives. The same frozen "
            "model then scores the same rows for every variant. Writes DIR/redaction.json "
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
        help="token class: NAME or NAME=KIND:ARG (repeatable)",
    )
    p.add_argument(
        "--class-from",
        type=Path,
        default=None,
        metavar="LEAKAGE_JSON",
        help="also test the candidate classes in leakage.json 'provenance' (file or folder)",
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
    p.add_argument("--chat", action="store_true", help="hf/embedded: wrap prompts as a chat turn")
    p.add_argument("--json", action="store_true", help="print redaction.json on stdout")
    p.set_defaults(func=run)


def _eval_filter(specs: list[str], examples: list[Any]) -> dict[str, list[str]]:
    if not specs:
        return {"split": ["test"]} if any(e.split == "test" for e in examples) else {}
    out: dict[str, list[str]] = {}
    for spec in specs:
        key, sep, values = spec.partition("=")
        if not sep or not values:
            raise ConfigError.invalid("--eval", "KEY=VALUE[,VALUE]", spec)
        out.setdefault(key.strip(), []).extend(v.strip() for v in values.split(","))
    return out


def _examples_path(data: Path, *, mapped: bool = False) -> Path:
    """The Example JSONL to read: ``data`` itself or ``data/examples.jsonl``; another
    trace format is refused with the command that converts it (unless a --mapping
    reads it)."""
    from toolaudit.traces import detect_format

    path = data / "examples.jsonl" if data.is_dir() else data
    if not path.is_file():
        raise DataError(f"{path}: no such file (expected examples.jsonl)")
    if mapped:
        return path
    fmt = detect_format(path)
    if fmt != "examples":
        raise TraceFormatError(
            path,
            None,
            None,
            f"this is a {fmt} file, but redact reads Example JSONL (id, label, group, "
            f"tools, prompt); convert it first: toolaudit traces convert {path} --out "
            "examples.jsonl",
        )
    return path


def run(args: argparse.Namespace) -> int:
    """Run the audit and write ``DIR/redaction.json``."""
    from toolaudit.models import load_model
    from toolaudit.redaction import (
        class_json,
        classes_from_leakage,
        default_classes,
        parse_class_specs,
        report_sections,
        run_redaction,
        select_rows,
        trim_examples,
        write_outputs,
    )
    from toolaudit.report import run_metadata, write_report
    from toolaudit.traces import Example, load_examples, read_jsonl

    mapping = load_mapping(args)
    path = _examples_path(args.data, mapped=mapping is not None)
    if mapping is not None:
        examples = list(load_examples(path, mapping=mapping))
    else:
        examples = list(read_jsonl(path, Example))
    classes = parse_class_specs(args.classes)
    if args.class_from is not None:
        have = {c.name for c in classes}
        classes += [c for c in classes_from_leakage(args.class_from) if c.name not in have]
    if not classes:
        classes = default_classes(examples)
    eval_filter = _eval_filter(args.eval, examples)
    rows = select_rows(examples, eval_filter=eval_filter, limit=args.limit, seed=args.seed)
    keep = [t.strip() for t in args.keep_tools.split(",")] if args.keep_tools else None
    if keep is not None or args.max_tool_lines is not None:
        rows = trim_examples(rows, keep_tools=keep, max_lines=args.max_tool_lines)
    config = {
        "data": str(path),
        "model": args.model,
        "classes": [c.name for c in classes],
        "eval": eval_filter,
        "scoring": args.scoring,
        "limit": args.limit,
        "n_boot": args.n_boot,
        "chat": bool(args.chat),
        "keep_tools": keep,
        "max_tool_lines": args.max_tool_lines,
    }
    # Every option that changes a result, classes with their sources; checked before
    # anything is written (the model's cache included), recorded once the model loads.
    run_config = {
        **config,
        "classes": [class_json(c) for c in classes],
        "seed": args.seed,
        "cache": str(args.cache) if args.cache else None,
    }
    check_run_config(args.out, run_config)
    options: dict[str, Any] = {"chat": True} if args.chat else {}
    cache = args.cache or args.out / "cache.sqlite"
    args.out.mkdir(parents=True, exist_ok=True)
    with exclusive(args.out):  # a second run into this folder is refused
        model = load_model(args.model, cache=cache, **options)
        write_run_config(args.out, run_config)
        with progress("redaction") as cb:
            result = run_redaction(
                rows,
                model,
                classes=classes,
                scoring=args.scoring,
                seed=args.seed,
                n_boot=args.n_boot,
                batch_rows=args.batch_rows,
                progress=cb,
            )
        calls = {k: int(result.calls.get(k, 0)) for k in ("made", "cached")}
        append_run_log(args.out, {"command": "toolaudit redact", "calls": calls})
        meta = run_metadata(command="toolaudit redact", seed=args.seed, config=config)
        out = write_outputs(args.out, result, classes, meta)
        sections = with_fallbacks(report_sections(result), meta["fallbacks"], title="Redaction")
        write_report(args.out, "toolaudit redaction audit", sections)
    if args.json:
        import json

        # the results file, plus this invocation's call counters (kept out of the file)
        print_json({**json.loads(out.read_text(encoding="utf-8")), "run": {"calls": calls}})
    else:
        for v in result.variants:
            delta = "" if v.delta is None else f"  ΔA {v.delta:+.4f}"
            sys.stdout.write(
                f"{visible(v.name):>12}: AUROC {v.auroc:.4f}{delta}  replacements {v.replacements}  "
                f"valid {v.valid_rate:.2f}\n"
            )
        sys.stdout.write(
            f"calls: {calls['made']} made, {calls['cached']} cached; wrote {visible(str(out))}\n"
        )
    return 0

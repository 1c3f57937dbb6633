"""``toolaudit models``: score, generate, train the controlled frozen model, prepare."""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path
from typing import Any

from toolaudit.cli._common import add_parser, print_json
from toolaudit.cli._validate import output_file, positive_int, seed
from toolaudit.errors import DataError


def register(sub: Any) -> None:
    """Add the ``models`` command group."""
    parser = add_parser(
        sub,
        "models",
        help="score and generate with any model backend; build the controlled frozen model",
        example="toolaudit models score embedded --context 'The capital of France is' "
        "--continuation ' Paris'",
    )
    msub = parser.add_subparsers(dest="models_command", metavar="SUBCOMMAND")

    def _help(args: argparse.Namespace) -> int:
        parser.print_help()
        return 2

    parser.set_defaults(func=_help)

    score = add_parser(
        msub,
        "score",
        help="per-token log-probabilities of a continuation given a context",
        example="toolaudit models score embedded --context 'The capital of France is' "
        "--continuation ' Paris' --json",
    )
    _add_spec(score)
    score.add_argument("--context", required=True, help="text the continuation follows")
    score.add_argument("--continuation", required=True, help="text to score")
    score.add_argument("--json", action="store_true", help="print the result as JSON")
    score.set_defaults(func=_score)

    gen = add_parser(
        msub,
        "generate",
        help="greedy completion of a prompt",
        example="toolaudit models generate embedded --prompt 'Once upon a time' --max-tokens 16",
    )
    _add_spec(gen)
    gen.add_argument("--prompt", required=True, help="prompt text")
    gen.add_argument("--max-tokens", type=positive_int, default=32, help="tokens to generate (32)")
    gen.add_argument("--stop", action="append", default=[], help="stop string (repeatable)")
    gen.add_argument("--json", action="store_true", help="print the result as JSON")
    gen.set_defaults(func=_generate)

    comp = add_parser(
        msub,
        "compare",
        help="score the same texts with two backends and report how closely they agree",
        example="toolaudit models compare embedded openai:gemma@http://localhost:8080/v1 "
        "--context 'The capital of France is' --continuation ' Paris.'",
    )
    comp.add_argument("spec", help="first model spec")
    comp.add_argument("other", help="second model spec")
    comp.add_argument("--context", action="append", required=True, help="repeatable")
    comp.add_argument(
        "--continuation", action="append", required=True, help="repeatable, paired in order"
    )
    comp.add_argument("--api-key-env", default=None, help="openai: key variable")
    comp.add_argument("--json", action="store_true", help="print the result as JSON")
    comp.set_defaults(func=_compare)

    train = add_parser(
        msub,
        "train-controlled",
        help="fit the controlled frozen model (char_wb TF-IDF + logistic regression on "
        "group C0, split train) and save it with joblib",
        example="toolaudit models train-controlled tcr/examples.jsonl --out frozen.joblib",
    )
    train.add_argument("data", type=Path, help="examples.jsonl (or a folder holding it)")
    train.add_argument("--out", type=output_file, required=True, help="joblib file to write")
    train.add_argument("--seed", type=seed, default=0, help="random seed (0)")
    train.add_argument("--json", action="store_true", help="print a summary as JSON")
    train.set_defaults(func=_train)

    prep = add_parser(
        msub,
        "prepare",
        help="convert and cache the embedded Gemma 3 270M once; print its folder",
        example="toolaudit models prepare",
    )
    prep.add_argument("--json", action="store_true", help="print paths as JSON")
    prep.set_defaults(func=_prepare)


def _add_spec(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "spec",
        help="model spec: embedded | hf:PATH_OR_ID | openai:MODEL@URL | sklearn:FILE | "
        "py:module:function",
    )
    parser.add_argument("--chat", action="store_true", help="hf/embedded: use the chat format")
    parser.add_argument(
        "--api-key-env",
        default=None,
        help="openai: environment variable holding the API key (default OPENAI_API_KEY)",
    )
    parser.add_argument("--cache", type=Path, default=None, help="SQLite response cache file")


def _load(args: argparse.Namespace) -> Any:
    from toolaudit.models import load_model

    options: dict[str, Any] = {}
    if args.chat:
        options["chat"] = True
    if args.api_key_env:
        options["api_key_env"] = args.api_key_env
    return load_model(args.spec, cache=args.cache, **options)


def _score(args: argparse.Namespace) -> int:
    lm = _load(args)
    logprobs = lm.loglikelihood([(args.context, args.continuation)])[0]
    total = float(sum(logprobs))
    result = {
        "model": lm.identity,
        "tokens": len(logprobs),
        "logprobs": logprobs,
        "sum": total,
        "mean_surprisal": -total / len(logprobs) if logprobs else math.nan,
    }
    if args.json:
        print_json(result)
    else:
        sys.stdout.write(
            f"{result['model']}: {len(logprobs)} tokens, sum log p = {total:.4f}, "
            f"mean surprisal = {result['mean_surprisal']:.4f} nats/token\n"
        )
    return 0


def _generate(args: argparse.Namespace) -> int:
    lm = _load(args)
    text = lm.generate([args.prompt], max_tokens=args.max_tokens, stop=args.stop)[0]
    if args.json:
        print_json({"model": lm.identity, "prompt": args.prompt, "completion": text})
    else:
        sys.stdout.write(text + "\n")
    return 0


def _compare(args: argparse.Namespace) -> int:
    from dataclasses import asdict

    from toolaudit.errors import ConfigError
    from toolaudit.models import compare_models, load_model

    if len(args.context) != len(args.continuation):
        raise ConfigError(
            f"--context given {len(args.context)} times but --continuation "
            f"{len(args.continuation)} times; they are paired in order"
        )
    models = []
    for spec in (args.spec, args.other):
        opts = (
            {"api_key_env": args.api_key_env}
            if args.api_key_env and spec.startswith("openai:")
            else {}
        )
        models.append(load_model(spec, **opts))
    agree = compare_models(
        models[0], models[1], list(zip(args.context, args.continuation, strict=True))
    )
    result = {"a": models[0].identity, "b": models[1].identity, **asdict(agree)}
    if args.json:
        print_json(result)
    else:
        sys.stdout.write(
            f"{agree.texts} texts, {agree.tokens} tokens: mean surprisal "
            f"{agree.mean_surprisal_a:.4f} vs {agree.mean_surprisal_b:.4f} nats/token "
            f"(pooled delta {agree.pooled_delta:.4f}, max per-text delta "
            f"{agree.max_text_delta:.4f}, r = {agree.correlation:.4f})\n"
        )
    return 0


def _train(args: argparse.Namespace) -> int:
    from toolaudit.models import save_pipeline, train_controlled_model
    from toolaudit.traces import Example, read_jsonl

    path = args.data / "examples.jsonl" if args.data.is_dir() else args.data
    if not path.is_file():
        raise DataError(f"{path}: no such file (expected examples.jsonl)")
    examples = list(read_jsonl(path, Example))
    pipe = train_controlled_model(examples, seed=args.seed)
    out = save_pipeline(pipe, args.out)
    n = sum(1 for e in examples if e.group == "C0" and e.split == "train")
    if args.json:
        print_json({"out": str(out), "train_rows": n, "seed": args.seed, "spec": f"sklearn:{out}"})
    else:
        sys.stdout.write(f"trained on {n} C0/train rows; saved {out} (spec sklearn:{out})\n")
    return 0


def _prepare(args: argparse.Namespace) -> int:
    from toolaudit.models import embedded_gguf_path, embedded_model_dir

    folder = embedded_model_dir()
    if args.json:
        print_json({"model_dir": str(folder), "gguf": str(embedded_gguf_path())})
    else:
        sys.stdout.write(f"{folder}\n")
    return 0

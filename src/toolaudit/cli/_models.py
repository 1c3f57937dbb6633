"""``toolaudit models``: score, generate, train the controlled frozen model, prepare."""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from toolaudit.cli._common import SETTINGS, add_parser, print_json
from toolaudit.cli._validate import finite_float, output_dir, output_file, positive_int, seed
from toolaudit.errors import ConfigError, DataError
from toolaudit.models import TRUNCATE
from toolaudit.report import visible

if TYPE_CHECKING:
    from toolaudit.models import ChatTurn, ToolSpec


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
        help="per-token log-probabilities of a continuation given a context, or the "
        "call/reply probabilities of a chat (--messages, --tools)",
        example="toolaudit models score embedded:qwen --context 'The capital of France is' "
        "--continuation ' Paris' --json",
    )
    _add_spec(score)
    score.add_argument("--context", default=None, help="text the continuation follows")
    score.add_argument("--continuation", default=None, help="text to score")
    score.add_argument(
        "--messages",
        type=Path,
        default=None,
        help="JSON file: a list of chat messages (OpenAI style); prints P(call) and P(reply) "
        "of the model's next turn",
    )
    score.add_argument("--tools", type=Path, default=None, help="JSON file: OpenAI tool schemas")
    score.add_argument("--json", action="store_true", help="print the result as JSON")
    score.set_defaults(func=_score)

    gen = add_parser(
        msub,
        "generate",
        help="greedy completion of a prompt, or a chat reply with parsed tool calls",
        example="toolaudit models generate embedded --prompt 'Once upon a time' --max-tokens 16",
    )
    _add_spec(gen)
    gen.add_argument("--prompt", default=None, help="raw prompt text (completion)")
    gen.add_argument("--messages", type=Path, default=None, help="JSON file of chat messages")
    gen.add_argument("--tools", type=Path, default=None, help="JSON file of OpenAI tool schemas")
    gen.add_argument("--max-tokens", type=positive_int, default=32, help="tokens to generate (32)")
    gen.add_argument("--temperature", type=float, default=0.0, help="0 is greedy (0)")
    gen.add_argument("--seed", type=seed, default=0, help="sampling seed (0)")
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
    comp.add_argument(
        "--request-timeout",
        type=finite_float(low=0, low_open=True),
        default=None,
        help="openai: seconds per request (default 30, or 600 for a server on localhost)",
    )
    comp.add_argument(
        "--device", default=None, help="hf/embedded: cpu, cuda, cuda:N (default: cuda if present)"
    )
    comp.add_argument("--json", action="store_true", help="print the result as JSON")
    comp.set_defaults(func=_compare)

    train = add_parser(
        msub,
        "train-controlled",
        help="fit the controlled frozen model on group C0, split train: --kind sklearn "
        "(default; char_wb TF-IDF + logistic regression, a joblib file) or --kind lm (a "
        "small causal LM trained here from scratch on CPU, an hf: folder with "
        "training.json and its held-out AUROC; see docs/redaction.md)",
        example="toolaudit models train-controlled tcr/examples.jsonl --out frozen.joblib\n"
        "  toolaudit models train-controlled tcr --kind lm --out lm --size small --steps 300",
    )
    train.add_argument("data", type=Path, help="examples.jsonl (or a folder holding it)")
    train.add_argument(
        "--out", type=Path, required=True, help="joblib file (sklearn) or folder (lm) to write"
    )
    train.add_argument(
        "--kind", choices=("sklearn", "lm"), default="sklearn", help="which model (sklearn)"
    )
    train.add_argument("--seed", type=seed, default=0, help="random seed (0)")
    lm = train.add_argument_group("--kind lm")
    lm.add_argument(
        "--size",
        choices=("tiny", "mini", "small"),
        default="small",
        help="tiny: 1 layer x 32; mini: 2 x 64; small: 4 x 128 (small)",
    )
    lm.add_argument("--steps", type=positive_int, default=300, help="updates (300)")
    lm.add_argument(
        "--epochs",
        type=finite_float(low=0, low_open=True),
        default=None,
        help="passes over the fit rows instead of --steps",
    )
    lm.add_argument("--batch-size", type=positive_int, default=4, help="sequences per update (4)")
    lm.add_argument(
        "--lr", type=finite_float(low=0, low_open=True), default=2e-3, help="peak rate (2e-3)"
    )
    lm.add_argument(
        "--no-trace",
        action="store_true",
        help="the seed's no-evidence baseline: every tool section emptied (train and eval)",
    )
    lm.add_argument(
        "--max-tool-lines",
        type=positive_int,
        default=None,
        help="keep the first N lines of each tool section (then run redact with the same "
        "--max-tool-lines); default the full prompts",
    )
    lm.add_argument("--threads", type=positive_int, default=2, help="torch threads (2)")
    lm.add_argument("--n-boot", type=positive_int, default=2000, help="bootstrap (2000)")
    train.add_argument("--json", action="store_true", help="print a summary as JSON")
    train.set_defaults(func=_train)

    prep = add_parser(
        msub,
        "prepare",
        help="assemble, verify and convert embedded models once (default: Qwen 0.5B and "
        "Gemma; name others: qwen1.5b, smollm2, or all); print their folders",
        example="toolaudit models prepare qwen1.5b smollm2",
    )
    prep.add_argument(
        "names",
        nargs="*",
        metavar="NAME",
        help="embedded models to prepare (see 'toolaudit models list'; 'all' for every one; "
        "default: qwen gemma)",
    )
    prep.add_argument(
        "--force",
        action="store_true",
        help="convert again, replacing the converted folders (after a damaged file)",
    )
    prep.add_argument("--json", action="store_true", help="print paths as JSON")
    prep.set_defaults(func=_prepare)

    lst = add_parser(
        msub,
        "list",
        help="the embedded models: spec, PyPI source, SHA-256, and whether prepared here",
        example="toolaudit models list",
    )
    lst.add_argument("--json", action="store_true", help="print the list as JSON")
    lst.set_defaults(func=_list)


def _add_spec(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "spec",
        help="model spec: embedded (= embedded:qwen) | embedded:gemma | hf:PATH_OR_ID | "
        "llama:qwen | openai:MODEL@URL | sklearn:FILE | py:module:function; backend "
        "options as ,KEY=VALUE (e.g. openai:m@URL,tokenizer=embedded:qwen)",
    )
    parser.add_argument(
        "--chat",
        action="store_true",
        help="render the context or prompt as one user turn in the model's chat template "
        "(a model that renders a chat: embedded, hf:, llama:, openai: with tokenizer=)",
    )
    parser.add_argument(
        "--device", default=None, help="hf/embedded: cpu, cuda, cuda:N (default: cuda if present)"
    )
    parser.add_argument(
        "--truncate",
        choices=TRUNCATE,
        default=None,
        help="hf/embedded: over-window contexts raise (error, default) or are cut "
        "(left, middle); part of the model identity",
    )
    parser.add_argument(
        "--max-length", type=int, default=None, help="hf/embedded: window in tokens"
    )
    parser.add_argument(
        "--api-key-env",
        default=None,
        help="openai: environment variable holding the API key (default OPENAI_API_KEY)",
    )
    parser.add_argument(
        "--request-timeout",
        type=finite_float(low=0, low_open=True),
        default=None,
        help="openai: seconds per request (default 30, or 600 for a server on localhost); retries are bounded in count and total time",
    )
    parser.add_argument("--cache", type=Path, default=None, help="SQLite response cache file")


def _local(spec: str) -> bool:
    return spec.split(":", 1)[0] in ("embedded", "hf")


def _load(args: argparse.Namespace) -> Any:
    from toolaudit.errors import ConfigError
    from toolaudit.models import load_model

    options: dict[str, Any] = {}
    local = {"truncate": args.truncate, "max_length": args.max_length}
    remote = {"api_key_env": args.api_key_env, "timeout": args.request_timeout}
    for key, value in local.items():
        if value is not None:
            if not _local(args.spec):
                raise ConfigError(
                    f"--{key.replace('_', '-')} applies to hf/embedded models only; got {args.spec!r}"
                )
            options[key] = value
    for key, value in remote.items():
        if value is not None and args.spec.startswith("openai:"):
            options[key] = value
    if args.max_length is not None and args.max_length < 2:
        raise ConfigError.invalid("--max-length", "an integer >= 2", args.max_length)
    lm = load_model(args.spec, cache=args.cache, device=args.device, **options)
    if args.spec.split(":", 1)[0] in ("embedded", "hf", "llama"):
        _load_now(lm, args.spec)
    return lm


def _load_now(lm: Any, spec: str) -> None:
    """Load a local model now, under a transient "loading" status on a terminal (10-30 s
    of silence otherwise); elsewhere (logs, pipes) nothing is printed, so a refusal of a
    damaged model folder stays one line on stderr."""
    if not sys.stderr.isatty() or SETTINGS.quiet or SETTINGS.progress == "off":
        return
    from rich.console import Console

    with Console(stderr=True).status(f"loading {spec} (about 10-30 s on 2 cores)"):
        getattr(lm, "model", None)  # a cached wrapper without .model loads on first use


def _as_turn(lm: Any, args: argparse.Namespace) -> str:
    """``--context`` / ``--prompt`` as given, or with ``--chat`` as one user turn in the
    model's chat template (a model that cannot render one says so in one line)."""
    from toolaudit.models import render_user_turn

    text = str(args.context if getattr(args, "context", None) is not None else args.prompt)
    return render_user_turn(lm, text) if args.chat else text


def _read_json_list(path: Path, key: str) -> list[dict[str, Any]]:
    """A JSON list of objects from ``path`` (or the list under ``key`` of an object)."""
    import json

    if not path.is_file():
        raise DataError(f"{path}: no such file (expected a JSON list of {key})")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise DataError(f"{path}: not JSON ({exc})") from None
    if isinstance(data, dict) and key in data:
        data = data[key]
    if not isinstance(data, list) or not all(isinstance(x, dict) for x in data):
        raise DataError(f"{path}: field '{key}': expected a JSON list of objects")
    if not data:
        raise DataError(f"{path}: field '{key}': empty (expected at least one)")
    return data


def _read_messages(path: Path) -> list[ChatTurn]:
    """``--messages FILE``: a chat checked by the model layer (content-part lists joined
    to text), refused naming the file and the message's field."""
    from toolaudit.models import check_messages

    return check_messages(_read_json_list(path, "messages"), source=path)


def _score(args: argparse.Namespace) -> int:
    from toolaudit.errors import ConfigError

    if args.messages is not None:
        if args.context is not None or args.continuation is not None:
            raise ConfigError("give either --messages [--tools] or --context and --continuation")
        if args.chat:
            raise ConfigError("--chat applies to --context; --messages is already a chat")
        return _score_chat(args)
    if args.context is None or args.continuation is None:
        raise ConfigError("score needs --context and --continuation (or --messages FILE)")
    lm = _load(args)
    logprobs = lm.loglikelihood([(_as_turn(lm, args), args.continuation)])[0]
    total = float(sum(logprobs))
    result = {
        "model": lm.identity,
        "chat": bool(args.chat),
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


def _score_chat(args: argparse.Namespace) -> int:
    from toolaudit.models import call_reply_probabilities

    messages = _read_messages(args.messages)
    tools = _read_json_list(args.tools, "tools") if args.tools is not None else None
    lm = _load(args)
    got = call_reply_probabilities(lm, messages, cast("list[ToolSpec] | None", tools))
    result = {
        "model": lm.identity,
        "messages": len(messages),
        "tools": len(tools or []),
        **got.as_dict(),
    }
    if args.json:
        print_json(result)
    else:
        parts = ", ".join(f"P({o}) = {p:.4f}" for o, p in got.openers.items())
        sys.stdout.write(
            f"{lm.identity}: P(call) = {got.p_call:.4f}, P(reply) = {got.p_reply:.4f} ({parts})\n"
        )
    return 0


def _generate(args: argparse.Namespace) -> int:
    from toolaudit.errors import ConfigError

    if (args.prompt is None) == (args.messages is None):
        raise ConfigError("generate needs exactly one of --prompt TEXT or --messages FILE")
    if args.max_tokens < 1:
        raise ConfigError.invalid("--max-tokens", "an integer >= 1", args.max_tokens)
    if args.prompt is not None:
        lm = _load(args)
        prompt = _as_turn(lm, args)
        text = lm.complete([prompt], max_tokens=args.max_tokens, stop=args.stop)[0]
        if args.json:
            print_json(
                {
                    "model": lm.identity,
                    "chat": bool(args.chat),
                    "prompt": prompt,
                    "completion": text,
                }
            )
        else:
            sys.stdout.write(visible(text, keep="\n\t") + "\n")
        return 0
    if args.chat:
        raise ConfigError("--chat applies to --prompt; --messages is already a chat")
    messages = _read_messages(args.messages)
    tools = _read_json_list(args.tools, "tools") if args.tools is not None else None
    lm = _load(args)
    gen = lm.generate(
        messages,
        tools,
        max_tokens=args.max_tokens,
        temperature=args.temperature,
        seed=args.seed,
        stop=args.stop,
    )
    if args.json:
        print_json({"model": lm.identity, **gen.to_dict()})
    else:
        sys.stdout.write(visible(gen.raw, keep="\n\t") + "\n")  # no raw escapes on a terminal
        for err in gen.parse_errors:
            sys.stdout.write(f"unparsed tool call: {visible(err)}\n")
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
    remote = {"api_key_env": args.api_key_env, "timeout": args.request_timeout}
    for spec in (args.spec, args.other):
        opts = (
            {k: v for k, v in remote.items() if v is not None} if spec.startswith("openai:") else {}
        )
        models.append(load_model(spec, device=args.device, **opts))
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
    if args.kind == "lm":
        return _train_lm(args, examples, path)
    try:
        target = output_file(str(args.out))
    except argparse.ArgumentTypeError as exc:
        raise ConfigError(f"--out: {exc}") from None
    pipe = train_controlled_model(examples, seed=args.seed)
    out = save_pipeline(pipe, target)
    n = sum(1 for e in examples if e.group == "C0" and e.split == "train")
    if args.json:
        print_json({"out": str(out), "train_rows": n, "seed": args.seed, "spec": f"sklearn:{out}"})
    else:
        sys.stdout.write(f"trained on {n} C0/train rows; saved {out} (spec sklearn:{out})\n")
    return 0


def _train_lm(args: argparse.Namespace, examples: list[Any], path: Path) -> int:
    from toolaudit.cli._common import progress
    from toolaudit.redaction import LMTrainConfig, train_controlled_lm
    from toolaudit.report import file_digest

    try:
        folder = output_dir(str(args.out))
    except argparse.ArgumentTypeError as exc:
        raise ConfigError(f"--out: {exc}") from None
    config = LMTrainConfig(
        size=args.size,
        steps=args.steps,
        epochs=args.epochs,
        batch_size=args.batch_size,
        lr=args.lr,
        seed=args.seed,
        trace=not args.no_trace,
        threads=args.threads,
        n_boot=args.n_boot,
        max_tool_lines=args.max_tool_lines,
    )
    with progress("train-controlled lm") as cb:
        data = {"name": path.parent.name, "sha256": file_digest(path)}
        result = train_controlled_lm(examples, folder, config=config, progress=cb, data=data)
    ev = result.summary["eval"]
    if args.json:
        print_json({"out": str(result.folder), "spec": result.spec, **result.summary})
    else:
        low, high = ev["ci95"]
        sys.stdout.write(
            f"trained {result.summary['config']['steps']} steps on "
            f"{result.summary['fit_rows']} C0/train rows in "
            f"{result.summary['train_seconds']:.0f} s; held-out AUROC {ev['auroc']:.4f} "
            f"[{low:.4f}, {high:.4f}] on {ev['rows']} test rows (valid answers "
            f"{ev['valid_rate']:.0%}); saved {result.folder} (spec {result.spec})\n"
        )
    return 0


def _prepare(args: argparse.Namespace) -> int:
    from toolaudit.models import (
        DEFAULT_EMBEDDED,
        EMBEDDED,
        embedded_gguf_path,
        embedded_model_dir,
        verify_prepared,
    )

    names = list(args.names) or [n for n, e in EMBEDDED.items() if e.by_default]
    if "all" in names:
        names = list(EMBEDDED)
    for name in names:
        if name not in EMBEDDED:
            raise ConfigError.invalid("embedded model", [*EMBEDDED, "all"], name)
    models = {}
    for name in dict.fromkeys(names):
        folder = embedded_model_dir(name, force=args.force)
        verify_prepared(folder)  # the files are the ones converted (SHA-256 recorded then)
        models[name] = {"model_dir": str(folder), "gguf": str(embedded_gguf_path(name))}
    default = models.get(DEFAULT_EMBEDDED, {})
    if args.json:
        print_json({**default, "default": f"embedded:{DEFAULT_EMBEDDED}", "models": models})
    else:
        for name, paths in models.items():
            sys.stdout.write(f"embedded:{name}\t{paths['model_dir']}\n")
    return 0


def _list(args: argparse.Namespace) -> int:
    from toolaudit.models import DEFAULT_EMBEDDED, EMBEDDED, embedded_status

    rows = [embedded_status(name) for name in EMBEDDED]
    if args.json:
        print_json({"default": f"embedded:{DEFAULT_EMBEDDED}", "models": rows})
        return 0
    for row in rows:
        where = row["model_dir"] or "not prepared"
        sys.stdout.write(
            f"{row['spec']}\t{row['model']}\t{row['source']}\tsha256 {row['sha256'] or '-'}"
            f"\t{'installed' if row['installed'] else 'not installed'}\t{where}\n"
        )
    return 0

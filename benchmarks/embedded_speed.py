"""The embedded models side by side in llama.cpp (the engine that runs them as agents and
judges): prompt tokens per second (reading a judge prompt from a cold cache) and decode
tokens per second (one-token forward steps after it), for Qwen2.5-Coder 0.5B (the
baseline), Qwen2.5-Coder 1.5B and SmolLM2-135M, in one run on this machine.

The prompt is the seed judge audit's real payload for the first record the committed
judge study chooses (the retail policy, the task criteria, the tools and a whole
gpt-4.1 conversation), rendered by each model's own chat template and cut to
``--prompt-tokens``; each figure is the best of ``--repeats`` (a short timing moves with
the machine's load, so the line also prints the 1-minute load average). The last line is

    prompt_ratio_<model>=<tokens/s over the 0.5B's> decode_ratio_<model>=<...> ...

(``<model>`` is ``qwen15b`` or ``smollm2``).

    python benchmarks/embedded_speed.py [--prompt-tokens 2048] [--decode-tokens 32]
        [--repeats 2] [--threads 2]
    python benchmarks/embedded_speed.py --smoke   # 256 prompt and 4 decode tokens, once

Needs the [llama], [qwen15b] and [smollm2] extras (``make test`` installs them).
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path
from typing import Any

from toolaudit.cli._common import default_data_root
from toolaudit.models import load_model

MODELS = ("qwen", "qwen1.5b", "smollm2")
TRACE = "tau2/simulations/retail__gpt-4.1__user-gpt-4.1__test40x1.json"


def judge_payload(data_root: Path) -> list[dict[str, Any]]:
    """The judge audit's chat payload for the first chosen record, as the study sends it."""
    from toolaudit.probes.judges._prompts import judge_messages
    from toolaudit.probes.judges._run import judge_contexts, record_id
    from toolaudit.probes.judges._traces import choose_records

    (episode,) = choose_records([data_root / TRACE], 1, seed=0)
    contexts, _ = judge_contexts([episode], data_root=data_root)
    return judge_messages(episode, contexts[record_id(episode)], "original")


def measure(name: str, chat: list[dict[str, Any]], args: argparse.Namespace) -> dict[str, Any]:
    lm: Any = load_model(f"llama:{name},threads={args.threads},max_length=8192")
    llm = lm.model
    ids = lm.tokenizer.apply_chat_template(chat, tokenize=False, add_generation_prompt=True)
    tokens = lm.tokenizer(ids, add_special_tokens=False)["input_ids"][: args.prompt_tokens]
    prompt_best = decode_best = float("inf")
    for _ in range(args.repeats):
        llm.reset()
        start = time.perf_counter()
        llm.eval(tokens)
        prompt_best = min(prompt_best, time.perf_counter() - start)
        step = tokens[-1]
        start = time.perf_counter()
        for _ in range(args.decode_tokens):
            llm.eval([step])
        decode_best = min(decode_best, time.perf_counter() - start)
    return {
        "model": lm.identity,
        "prompt_tokens": len(tokens),
        "prompt_tps": len(tokens) / prompt_best,
        "decode_tps": args.decode_tokens / decode_best,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prompt-tokens", type=int, default=2048)
    parser.add_argument("--decode-tokens", type=int, default=32)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--data-root", type=Path, default=None)
    parser.add_argument("--smoke", action="store_true", help="256 + 4 tokens, once")
    args = parser.parse_args()
    if args.smoke:
        args.prompt_tokens, args.decode_tokens, args.repeats = 256, 4, 1
    root = args.data_root or default_data_root()
    if root is None:
        raise SystemExit("no data root: give --data-root (the folder with tau2/simulations)")
    chat = judge_payload(root)
    rows = {name: measure(name, chat, args) for name in MODELS}
    load = os.getloadavg()[0]
    for name, row in rows.items():
        print(
            f"{name}: {row['model']}: prompt {row['prompt_tps']:.1f} tokens/s "
            f"({row['prompt_tokens']} tokens), decode {row['decode_tps']:.1f} tokens/s "
            f"({args.threads} threads, load {load:.2f})"
        )
    base = rows["qwen"]
    print(  # keys without the dot of "qwen1.5b": a field is NAME=VALUE, NAME a word
        " ".join(
            f"prompt_ratio_{n.replace('.', '')}={rows[n]['prompt_tps'] / base['prompt_tps']:.3f} "
            f"decode_ratio_{n.replace('.', '')}={rows[n]['decode_tps'] / base['decode_tps']:.3f}"
            for n in MODELS[1:]
        )
    )


if __name__ == "__main__":
    main()

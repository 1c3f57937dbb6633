"""Engines side by side on the same token ids: transformers float32 (the ``embedded:``
backend) against llama.cpp in process (``llama:``, the shipped GGUF weights, 1 and 2
threads), for scoring (prompt tokens/s) and generating (decode tokens/s).

Scoring texts are the faults audit's own: task 0's returns at the site under the five
arms, each after the whole rendered prefix (policy, 16 tool schemas, the conversation;
about 4,000 tokens), sent as one batch from a cold cache. Every engine's per-token
log-probabilities are compared with transformers float32 (``mean_diff``: the mean
absolute difference over a request's tokens, the largest over requests). Decoding is
an agent's job: greedy, up to ``--decode-tokens`` new tokens after the same rendered
retail conversation (policy, 16 tool schemas, the clean return), with the prompt
already cached, so only the decode steps are timed, the fastest of ``--repeats`` (a
short timing moves with the machine's load). The last line is

    score_ratio=<best engine / transformers> decode_ratio=<...> max_mean_diff=<...>

    python benchmarks/engine_speed.py [--model qwen|gemma] [--decode-tokens 128] [--repeats 3]
    python benchmarks/engine_speed.py --smoke

``--smoke`` is the smallest real run, a check that the script works rather than a
measurement: the embedded Qwen on transformers and llama.cpp (2 threads only), the
texts rendered without the policy and with the site's tool schema only (about 1,050
tokens), two arms scored and 4 tokens decoded once. Its ``max_mean_diff`` is still the
engines' real disagreement; it takes about two minutes on 2 busy cores.

onnxruntime is measured by ``benchmarks/onnx_speed.py`` (it needs packages toolaudit
does not depend on, and exports a 4.5 GB graph first), on the same texts against the
same transformers baseline.
"""

from __future__ import annotations

import argparse
import os
import time
from typing import Any

import numpy as np

from toolaudit.cli._common import default_data_root
from toolaudit.faults import FaultsConfig, domain_census
from toolaudit.faults._chat import SLOT, event_messages, render_split, tool_specs
from toolaudit.faults._run import task_arms
from toolaudit.models import load_model
from toolaudit.traces import load_domain


def faults_chat(
    lm: Any, *, short: bool = False
) -> tuple[list[tuple[str, str]], list[dict[str, Any]]]:
    """Task 0's site return under each arm after the whole rendered prefix (scoring
    requests), and the conversation up to the clean return (the decoding prompt).
    ``short`` (smoke runs): no policy, the site's tool schema only, two arms."""
    root = default_data_root()
    if root is None:
        raise SystemExit("no data root: set TAU2_DATA_DIR or keep ../shared/data")
    domain = load_domain(root / "tau2" / "domains" / "retail")
    cand = next(c for c in domain_census(domain) if c.qualifies)
    traj, site, payloads, _ = task_arms(cand, FaultsConfig(data_root=str(root)), domain.db)
    head: list[dict[str, Any]] = [] if short else [{"role": "system", "content": domain.policy}]
    for i, ev in enumerate(traj.events[: site.event]):
        head += event_messages(ev, i)
    step = traj.events[site.event]
    tools = chat_tools(short)
    split = render_split(lm, [*head, *event_messages(step, site.event, content=SLOT)], tools)
    chat = [*head, *event_messages(step, site.event, content=payloads["clean"].content)]
    requests = [(split.context, p.content) for p in payloads.values()]
    return (requests[:2] if short else requests), chat


def chat_tools(short: bool) -> list[Any]:
    """The tool schemas rendered: all 16 retail tools, or the site's tool alone."""
    return tool_specs(["get_order_details"] if short else None)


def time_scoring(lm: Any, requests: list[tuple[str, str]]) -> tuple[list[list[float]], float]:
    lm.clear_cache()
    t0 = time.perf_counter()
    scores = lm.loglikelihood(requests)
    return scores, time.perf_counter() - t0


def time_decoding(
    lm: Any, chat: list[dict[str, Any]], n: int, repeats: int, *, short: bool = False
) -> tuple[int, float]:
    """Tokens decoded and the fastest of ``repeats`` timings (decoding is short, so one
    timing moves with the machine's load; the fastest is the engine's own speed)."""
    tools = chat_tools(short)
    lm.generate(chat, tools, max_tokens=1)  # the prompt is cached: time the decode steps
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        gen = lm.generate(chat, tools, max_tokens=n)
        best = min(best, time.perf_counter() - t0)
    ids = lm.encode_continuation(gen.raw)
    return max(1, len(ids)), best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", choices=("qwen", "gemma"), default="qwen")
    parser.add_argument("--decode-tokens", type=int, default=128)
    parser.add_argument("--repeats", type=int, default=3, help="decode timings per engine")
    parser.add_argument(
        "--threads", type=int, nargs="+", default=[1, 2], help="llama.cpp thread counts"
    )
    parser.add_argument("--smoke", action="store_true", help="a short check (see above)")
    args = parser.parse_args()
    if args.smoke:
        args.model, args.decode_tokens, args.repeats, args.threads = "qwen", 4, 1, [2]
    base = load_model(f"embedded:{args.model}", device="cpu")
    requests, chat = faults_chat(base, short=args.smoke)
    n_tokens = len(base.encode_context(requests[0][0])) + sum(
        len(base.encode_continuation(c)) for _, c in requests
    )
    print(
        f"load: {os.getloadavg()[0]:.2f} (1-min average), {os.cpu_count()} cores; "
        f"scoring {len(requests)} requests, {n_tokens} distinct tokens"
    )
    ref, t_ref = time_scoring(base, requests)
    nd, d_ref = time_decoding(base, chat, args.decode_tokens, args.repeats, short=args.smoke)
    rows = [("transformers fp32", n_tokens / t_ref, nd / d_ref, 0.0)]
    del base
    for threads in args.threads:
        lm = load_model(f"llama:{args.model}", threads=threads)
        got, t = time_scoring(lm, requests)
        nd, d = time_decoding(lm, chat, args.decode_tokens, args.repeats, short=args.smoke)
        diff = max(
            float(np.mean(np.abs(np.array(a) - np.array(b)))) for a, b in zip(got, ref, strict=True)
        )
        rows.append((f"llama.cpp gguf, {threads} thread(s)", n_tokens / t, nd / d, diff))
        del lm
    print(f"{'engine':32} {'score tok/s':>12} {'decode tok/s':>13} {'mean |dlp|':>11}")
    for name, s, d, diff in rows:
        print(f"{name:32} {s:12.1f} {d:13.2f} {diff:11.4f}")
    best_s = max(r[1] for r in rows[1:])
    best_d = max(r[2] for r in rows[1:])
    print(
        f"score_ratio={best_s / rows[0][1]:.2f} decode_ratio={best_d / rows[0][2]:.2f} "
        f"max_mean_diff={max(r[3] for r in rows):.4f}"
    )


if __name__ == "__main__":
    main()

"""Scoring speed: the model layer (KV-cached prefix reuse) vs naive full forward passes.

A faults-sized workload on one model: one shared prefix of about 3,000 tokens (the retail
policy, 16 tool schemas and a first turn), 5 arms (the site's tool return differs per
arm), and for each arm the steps k = 0..3, each with

* S1: the tool return scored after the whole prefix,
* S0: the same return after that tool's schema and the call alone,
* the action distribution: 17 candidate actions (16 tool calls and a reply) scored at the
  decision after the return.

The layer is ``HFModel.loglikelihood`` (requests sent step by step, as an audit sends
them, so reuse across calls counts). The baseline is one full forward pass with full
output logits per request (``naive_logprobs``) on the same model and the same token ids.
Every log-probability must agree within 1e-3; the last line is
``ratio=<naive/layer> max_abs_diff=<x>``.

With a real embedded model the workload is text rendered by the model's own template.
``--random-init`` builds the model from a shape (``qwen`` 0.5B, ``gemma`` 270M,
``qwen7b``) with random weights and random token ids, for timing where the weights
cannot travel (``benchmarks/gpu_check.sh``).

``--smoke`` checks in seconds that the script still runs: a tiny random model with the
embedded Qwen's tokenizer and template (``_tiny.py``) on the text workload with the
policy cut to its first 400 characters (contexts of about 2,600 tokens, mostly the tool
schemas), 2 arms, k = 0..1, and 3 naive requests; the two sides must still agree, but
its ratio means nothing.

    OMP_NUM_THREADS=2 python benchmarks/scoring_speed.py --model embedded:qwen
    python benchmarks/scoring_speed.py --random-init qwen --device cuda
    python benchmarks/scoring_speed.py --smoke
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from toolaudit.models._hf import HFModel
from toolaudit.models._prefix import naive_logprobs

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _tiny import tiny_qwen  # noqa: E402

SMOKE = {"prefix_tokens": 300, "arms": 2, "k_max": 1, "naive_sample": 3, "policy_chars": 400}

SHAPES: dict[str, dict[str, Any]] = {
    "qwen": {
        "model_type": "qwen2", "hidden_size": 896, "num_hidden_layers": 24,
        "num_attention_heads": 14, "num_key_value_heads": 2, "intermediate_size": 4864,
        "vocab_size": 151936, "max_position_embeddings": 32768, "tie_word_embeddings": True,
        "rope_theta": 1000000.0,
    },
    "gemma": {
        "model_type": "gemma3_text", "hidden_size": 640, "num_hidden_layers": 18,
        "num_attention_heads": 4, "num_key_value_heads": 1, "head_dim": 256,
        "intermediate_size": 2048, "vocab_size": 262144, "max_position_embeddings": 32768,
        "sliding_window": 512, "tie_word_embeddings": True,
    },
    "qwen7b": {
        "model_type": "qwen2", "hidden_size": 3584, "num_hidden_layers": 28,
        "num_attention_heads": 28, "num_key_value_heads": 4, "intermediate_size": 18944,
        "vocab_size": 152064, "max_position_embeddings": 32768, "tie_word_embeddings": False,
        "rope_theta": 1000000.0,
    },
}  # fmt: skip
TOOL_NAMES = [
    "find_user_id_by_email", "find_user_id_by_name_zip", "get_user_details",
    "get_order_details", "get_product_details", "list_all_product_types",
    "cancel_pending_order", "modify_pending_order_items", "modify_pending_order_address",
    "modify_pending_order_payment", "modify_user_address", "return_delivered_order_items",
    "exchange_delivered_order_items", "calculate", "transfer_to_human_agents", "think",
]  # fmt: skip


def _tool_schema(name: str, rng: random.Random) -> dict[str, Any]:
    params = {
        f"{w}_id": {"type": "string", "description": f"The {w} id, such as '#{w[0].upper()}{rng.randint(1000000, 9999999)}'."}
        for w in rng.sample(["order", "user", "item", "payment", "product", "address"], 2)
    }  # fmt: skip
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": f"{name.replace('_', ' ').capitalize()}. Use it only after the user "
            "is authenticated and has confirmed the action explicitly.",
            "parameters": {"type": "object", "properties": params, "required": list(params)},
        },
    }


def _record(rng: random.Random, arm: int, step: int) -> str:
    items = [
        {"item_id": str(rng.randint(10**9, 10**10)), "name": rng.choice(["Lamp", "Kettle", "Tent"]),
         "price": round(rng.uniform(10, 500), 2)}
        for _ in range(3)
    ]  # fmt: skip
    status = ["pending", "delivered", "cancelled", "processed", "returned"][arm % 5]
    return json.dumps({"order_id": f"#W{rng.randint(10**6, 10**7)}", "status": status,
                       "step": step, "items": items})  # fmt: skip


class Workload:
    """Requests of the faults-sized workload, grouped in the order an audit sends them."""

    def __init__(
        self, lm: HFModel, *, prefix_tokens: int, arms: int, k_max: int, seed: int,
        policy_chars: int | None = None,
    ):  # fmt: skip
        self.lm, self.rng = lm, random.Random(seed)
        self.tools = [_tool_schema(n, self.rng) for n in TOOL_NAMES]
        policy = Path(__file__).resolve().parents[2] / "shared/data/tau2/domains/retail/policy.md"
        text = policy.read_text() if policy.is_file() else "Follow the retail policy. " * 200
        text = text[:policy_chars]  # the whole policy unless a smoke run cuts it
        system = text
        while (
            len(lm.encode_context(lm.render([{"role": "system", "content": system}], self.tools)))
            < prefix_tokens - 60
        ):
            system += "\n" + text
        self.system = system
        self.arms, self.k_max = arms, k_max

    def _call(self, name: str, k: int) -> dict[str, Any]:
        args = {"order_id": f"#W{1000000 + k}"}
        return {"role": "assistant", "content": "",
                "tool_calls": [{"id": f"c{k}", "type": "function",
                                "function": {"name": name, "arguments": args}}]}  # fmt: skip

    def _split(self, messages: list[dict[str, Any]], tools: Sequence[dict[str, Any]]) -> str:
        """The rendered text up to where the last tool message's content starts."""
        mark = "\x00RETURN\x00"
        last = dict(messages[-1], content=mark)
        text = self.lm.render([*messages[:-1], last], tools, add_generation_prompt=False)
        return text[: text.index(mark)]

    def groups(self) -> list[list[tuple[str, str]]]:
        """One group of requests per (arm, step): S1, then the 17 actions, then S0."""
        base = [{"role": "system", "content": self.system},
                {"role": "user", "content": "Hi, I want to check my order #W1000000."}]  # fmt: skip
        shared_returns = [_record(self.rng, 0, k) for k in range(self.k_max + 1)]
        out = []
        for arm in range(self.arms):
            msgs = list(base)
            for k in range(self.k_max + 1):
                name = TOOL_NAMES[(3 + k) % len(TOOL_NAMES)]
                content = _record(random.Random(arm), arm, 0) if k == 0 else shared_returns[k]
                msgs += [
                    self._call(name, k),
                    {"role": "tool", "tool_call_id": f"c{k}", "content": ""},
                ]
                ctx = self._split(msgs, self.tools)
                msgs[-1] = dict(msgs[-1], content=content)
                decision = self.lm.render(msgs, self.tools)
                actions = [f'{{"name": "{t}", "arguments": {{' for t in TOOL_NAMES] + ["I have"]
                tool = next(t for t in self.tools if t["function"]["name"] == name)
                s0 = self._split(
                    [self._call(name, k), {"role": "tool", "tool_call_id": "c", "content": ""}],
                    [tool],
                )
                out.append([(ctx, content)] + [(decision, a) for a in actions] + [(s0, content)])
        return out


def _random_model(shape: str, device: str, dtype: str) -> HFModel:
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM

    cfg = dict(SHAPES[shape])
    config = AutoConfig.for_model(cfg.pop("model_type"), **cfg)
    torch.manual_seed(0)
    model = AutoModelForCausalLM.from_config(config, dtype=getattr(torch, dtype)).to(device).eval()
    return HFModel.from_loaded(model, None, identity=f"random:{shape}", batch_size=17)


def _random_groups(lm: HFModel, *, prefix_tokens: int, arms: int, k_max: int, seed: int):
    rng = random.Random(seed)
    vocab = lm.model.config.vocab_size

    def ids(n: int) -> list[int]:
        return [rng.randrange(100, vocab) for _ in range(n)]

    prefix = ids(prefix_tokens)
    actions = [ids(rng.randint(4, 9)) for _ in range(17)]
    shared = [ids(160) for _ in range(k_max + 1)]
    out = []
    for _arm in range(arms):
        ctx = list(prefix)
        for k in range(k_max + 1):
            call, close = ids(30), ids(8)
            ctx = ctx + call
            content = ids(160) if k == 0 else shared[k]
            decision = ctx + content + close
            s0 = ids(150) + call
            out.append([(list(ctx), content)] + [(decision, a) for a in actions] + [(s0, content)])
            ctx = decision
    return out


def parser() -> argparse.ArgumentParser:
    """The script's options (``gpu_check.sh`` passes some; its test parses them here)."""
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--model", default="embedded:qwen")
    p.add_argument("--random-init", choices=sorted(SHAPES), default=None)
    p.add_argument("--device", default="cpu")
    p.add_argument("--dtype", default=None, help="default float32 on CPU, bfloat16 on CUDA")
    p.add_argument("--prefix-tokens", type=int, default=3000)
    p.add_argument("--arms", type=int, default=5)
    p.add_argument("--k-max", type=int, default=3)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--tolerance", type=float, default=1e-3, help="largest allowed |diff|")
    p.add_argument("--naive-sample", type=int, default=None,
                   help="run the naive side on N evenly spaced requests only; its time is "
                   "extrapolated to all requests by token count")  # fmt: skip
    p.add_argument("--smoke", action="store_true", help="a seconds-long check (see above)")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    if args.smoke:
        vars(args).update(SMOKE)
    dtype = args.dtype or ("bfloat16" if args.device.startswith("cuda") else "float32")
    if args.smoke:
        lm = tiny_qwen(batch_size=17)
        wl = Workload(lm, prefix_tokens=args.prefix_tokens, arms=args.arms, k_max=args.k_max, seed=args.seed, policy_chars=args.policy_chars)  # fmt: skip
        text_groups = wl.groups()
        groups_tok = [[(lm.encode_context(c), lm.encode_continuation(k)) for c, k in g] for g in text_groups]  # fmt: skip
        run_layer = None
    elif args.random_init:
        lm = _random_model(args.random_init, args.device, dtype)
        groups_tok = _random_groups(lm, prefix_tokens=args.prefix_tokens, arms=args.arms, k_max=args.k_max, seed=args.seed)  # fmt: skip
        run_layer = lm.loglikelihood_tokens
    else:
        lm = HFModel(args.model, device=args.device, dtype=dtype, batch_size=17)
        wl = Workload(lm, prefix_tokens=args.prefix_tokens, arms=args.arms, k_max=args.k_max, seed=args.seed)  # fmt: skip
        text_groups = wl.groups()
        groups_tok = [[(lm.encode_context(c), lm.encode_continuation(k)) for c, k in g] for g in text_groups]  # fmt: skip
        run_layer = None
    n_req = sum(len(g) for g in groups_tok)
    print(f"model={lm.identity} device={args.device} groups={len(groups_tok)} requests={n_req} "
          f"longest_context={max(len(c) for g in groups_tok for c, _ in g)}", flush=True)  # fmt: skip
    sync = _sync(args.device)
    t0 = time.perf_counter()
    layer: list[list[list[float]]] = []
    for i, g in enumerate(groups_tok):
        layer.append(run_layer(g) if run_layer else lm.loglikelihood(text_groups[i]))
    sync()
    t_layer = time.perf_counter() - t0
    print(f"layer: {t_layer:.1f}s, {lm.scorer.tokens_run} body tokens, "
          f"{len(groups_tok) / t_layer:.3f} groups/s", flush=True)  # fmt: skip
    flat = [(gi, ri) for gi, g in enumerate(groups_tok) for ri in range(len(g))]
    all_tokens = sum(len(groups_tok[gi][ri][0]) + len(groups_tok[gi][ri][1]) for gi, ri in flat)
    n = min(args.naive_sample or len(flat), len(flat))
    # An evenly spaced sample of requests (every arm, step and request kind represented).
    picked = sorted({round(i * (len(flat) - 1) / max(1, n - 1)) for i in range(n)})
    t0 = time.perf_counter()
    diff, naive_tokens = 0.0, 0
    for gi, ri in (flat[i] for i in picked):
        ctx, cont = groups_tok[gi][ri]
        lp = layer[gi][ri]
        ref = naive_logprobs(lm.model, ctx, cont)
        naive_tokens += len(ctx) + len(cont)
        if len(ref) != len(lp):
            raise SystemExit(f"token count differs: {len(ref)} vs {len(lp)}")
        diff = max([diff] + [abs(a - b) for a, b in zip(ref, lp, strict=True)])
        print(f"naive: {naive_tokens} tokens, {time.perf_counter() - t0:.0f}s", flush=True)
    sync()
    t_sample = time.perf_counter() - t0
    # Full forwards cost about the same per token at these lengths: scale by tokens.
    t_naive = t_sample * all_tokens / naive_tokens
    scaled = (
        f" (extrapolated by tokens from {len(picked)} of {len(flat)} requests)"
        if len(picked) < len(flat)
        else ""
    )
    print(f"naive: {t_naive:.1f}s{scaled}, {naive_tokens / t_sample:.0f} tokens/s; "
          f"layer {all_tokens / t_layer:.0f} effective tokens/s; "
          f"layer {t_layer:.2f} s/task, naive {t_naive:.2f} s/task (one task = all arms and steps)")  # fmt: skip
    ok = diff <= args.tolerance
    print(f"ratio={t_naive / t_layer:.2f} max_abs_diff={diff:.2e}")
    return 0 if ok else 1


def _sync(device: str):  # type: ignore[no-untyped-def]
    if device.startswith("cuda"):
        import torch

        return torch.cuda.synchronize
    return lambda: None


if __name__ == "__main__":
    sys.exit(main())

"""onnxruntime against transformers float32 on the faults audit's scoring texts.

The embedded Qwen (its converted float32 folder) is exported to two ONNX graphs with
an explicit KV cache: ``prefill`` (token ids and past keys/values -> present
keys/values) and ``step`` (the same, plus log-probabilities at every new position).
Scoring then reads task 0's context once and each of the five site returns after it,
as ``benchmarks/engine_speed.py`` does for the other engines, at the faults contexts'
real length (about 4,200 tokens), and compares every per-token log-probability with
the ``embedded:`` backend's. ``--int8`` also times onnxruntime's dynamic int8
quantization of both graphs (per-channel weights, MatMul only). The last line is

    score_ratio=<best onnxruntime / transformers> max_mean_diff=<...>

onnxruntime, onnx and onnxscript are not toolaudit dependencies; install them first:

    pip install onnxruntime onnx onnxscript
    python benchmarks/onnx_speed.py [--threads 1 2] [--int8] [--work DIR]

The graphs take about 4.5 GB (6.5 GB with ``--int8``) under ``--work`` (default a
temporary folder, removed at the end) and about 3 minutes to export.

``--smoke`` checks in seconds that the script runs: a tiny random model with the
embedded Qwen's tokenizer (``_tiny.py``) is exported and scored instead, on the texts
rendered without the policy and with the site's tool schema only (two arms), one
thread. Both sides run the same weights, so ``max_mean_diff`` still checks the export;
the ratio means nothing.

    python benchmarks/onnx_speed.py --smoke
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _tiny import tiny_qwen  # noqa: E402
from engine_speed import faults_chat, time_scoring  # noqa: E402

from toolaudit.models import load_model
from toolaudit.models._embedded import embedded_model_dir


def _step_module(model: Any, *, with_logits: bool) -> Any:
    """Qwen2's forward written with the cache as plain tensors: ``past_k`` and ``past_v``
    are ``[layers, 1, kv_heads, T, head_dim]``; new tokens sit at positions T.. and see
    every past position and the new ones up to their own."""
    import torch
    from transformers.models.qwen2.modeling_qwen2 import apply_rotary_pos_emb

    head_dim = model.config.hidden_size // model.config.num_attention_heads

    class Step(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.m = model

        def forward(self, input_ids: Any, past_k: Any, past_v: Any) -> Any:
            past, n = past_k.shape[3], input_ids.shape[1]
            x = self.m.model.embed_tokens(input_ids)
            pos = torch.arange(n, dtype=torch.long).unsqueeze(0) + past
            cos, sin = self.m.model.rotary_emb(x, pos)
            cols = torch.arange(past + n).unsqueeze(0)
            rows = torch.arange(n).unsqueeze(1) + past
            mask = (cols <= rows).unsqueeze(0).unsqueeze(0)
            keys, values = [], []
            for i, layer in enumerate(self.m.model.layers):
                attn = layer.self_attn
                h = layer.input_layernorm(x)
                q = attn.q_proj(h).view(1, n, -1, head_dim).transpose(1, 2)
                k = attn.k_proj(h).view(1, n, -1, head_dim).transpose(1, 2)
                v = attn.v_proj(h).view(1, n, -1, head_dim).transpose(1, 2)
                q, k = apply_rotary_pos_emb(q, k, cos, sin)
                k = torch.cat([past_k[i], k], dim=2)
                v = torch.cat([past_v[i], v], dim=2)
                keys.append(k)
                values.append(v)
                o = torch.nn.functional.scaled_dot_product_attention(
                    q, k, v, attn_mask=mask, enable_gqa=True
                )
                x = x + attn.o_proj(o.transpose(1, 2).reshape(1, n, -1))
                x = x + layer.mlp(layer.post_attention_layernorm(x))
            if not with_logits:
                return torch.stack(keys), torch.stack(values)
            logits = self.m.lm_head(self.m.model.norm(x))
            return torch.log_softmax(logits, -1), torch.stack(keys), torch.stack(values)

    return Step().eval()


def export(work: Path, model: Any = None) -> tuple[Path, Path, tuple[int, int, int]]:
    """The prefill and step graphs of the embedded Qwen (or ``model``) under ``work``;
    checks that the rewritten forward gives transformers' own log-probabilities before
    exporting."""
    import torch
    from transformers import AutoModelForCausalLM

    if model is None:
        model = AutoModelForCausalLM.from_pretrained(
            str(embedded_model_dir("qwen")), dtype=torch.float32
        ).eval()
    cfg = model.config
    shape = (
        cfg.num_hidden_layers,
        cfg.num_key_value_heads,
        cfg.hidden_size // cfg.num_attention_heads,
    )
    ids = torch.tensor([[785, 6002, 4588, 369]])
    past = torch.zeros(shape[0], 1, shape[1], 5, shape[2])
    step = _step_module(model, with_logits=True)
    with torch.no_grad():
        mine = step(ids, past[:, :, :, :0], past[:, :, :, :0])[0]
        theirs = torch.log_softmax(model(ids).logits, -1)
    gap = float((mine - theirs).abs().max())
    if gap > 1e-4:
        raise SystemExit(f"the rewritten forward is {gap:.2e} off transformers; not exporting")
    n = torch.export.Dim("n", min=1, max=32768)
    t = torch.export.Dim("T", min=0, max=32768)
    dims = {"input_ids": {1: n}, "past_k": {3: t}, "past_v": {3: t}}
    paths = []
    for name, logits in (("prefill", False), ("step", True)):
        path = work / f"{name}.onnx"
        outs = ["logp", "k", "v"] if logits else ["k", "v"]
        torch.onnx.export(
            _step_module(model, with_logits=logits),
            (ids, past, past.clone()),  # two tensors: aliased inputs would merge
            str(path),
            dynamo=True,
            input_names=["input_ids", "past_k", "past_v"],
            output_names=outs,
            dynamic_shapes=dims,
            external_data=True,
        )
        paths.append(path)
    return paths[0], paths[1], shape


def quantize(path: Path) -> Path:
    """onnxruntime's dynamic int8 quantization of a graph (per-channel, MatMul only)."""
    from onnxruntime.quantization import QuantType, quantize_dynamic

    out = path.with_name(path.stem + "-int8.onnx")
    quantize_dynamic(
        str(path),
        str(out),
        weight_type=QuantType.QInt8,
        per_channel=True,
        op_types_to_quantize=["MatMul"],
    )
    return out


def score(
    prefill: Path, step: Path, shape: tuple[int, int, int], threads: int,
    ctx: list[int], conts: list[list[int]],
) -> tuple[list[list[float]], float]:  # fmt: skip
    """Per-token log-probabilities of each continuation after ``ctx`` and the seconds
    taken (sessions built before the clock starts): the context but its last token once,
    then each continuation from the last context token on, on the cached keys/values."""
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.intra_op_num_threads = threads
    opts.inter_op_num_threads = 1
    cpu = ["CPUExecutionProvider"]
    pre = ort.InferenceSession(str(prefill), opts, providers=cpu)
    run = ort.InferenceSession(str(step), opts, providers=cpu)
    layers, heads, dim = shape
    empty = np.zeros((layers, 1, heads, 0, dim), np.float32)
    t0 = time.perf_counter()
    feed = {"input_ids": np.array([ctx[:-1]], np.int64), "past_k": empty, "past_v": empty}
    keys, values = pre.run(None, feed)
    out = []
    for cont in conts:
        ids = np.array([[ctx[-1], *cont[:-1]]], np.int64)
        logp = run.run(["logp"], {"input_ids": ids, "past_k": keys, "past_v": values})[0]
        out.append([float(logp[0, i, tok]) for i, tok in enumerate(cont)])
    return out, time.perf_counter() - t0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--int8", action="store_true", help="also time dynamic int8 graphs")
    parser.add_argument("--work", type=Path, default=None, help="folder for the graphs")
    parser.add_argument("--smoke", action="store_true", help="a tiny model (see above)")
    args = parser.parse_args()
    if args.smoke:
        args.threads = [1]
    try:
        import onnxruntime  # noqa: F401
        import onnxscript  # noqa: F401
    except ImportError as exc:
        raise SystemExit(f"{exc}: pip install onnxruntime onnx onnxscript") from None
    work = args.work or Path(tempfile.mkdtemp(prefix="onnx-speed-"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        lm = tiny_qwen() if args.smoke else load_model("embedded:qwen", device="cpu")
        requests, _ = faults_chat(lm, short=args.smoke)
        ctx = lm.encode_context(requests[0][0])
        conts = [lm.encode_continuation(c) for _, c in requests]
        n_tokens = len(ctx) + sum(map(len, conts))
        print(
            f"load: {os.getloadavg()[0]:.2f} (1-min average), {os.cpu_count()} cores; "
            f"scoring {len(requests)} requests, {n_tokens} distinct tokens",
            flush=True,
        )
        ref, t_ref = time_scoring(lm, requests)
        tiny = lm.model if args.smoke else None
        del lm
        t0 = time.perf_counter()
        prefill, step, shape = export(work, tiny)
        print(f"exported in {time.perf_counter() - t0:.0f} s", flush=True)
        graphs = [("onnxruntime fp32", prefill, step)]
        if args.int8:
            graphs.append(("onnxruntime int8", quantize(prefill), quantize(step)))
        import torch

        rows = [(f"transformers fp32, {torch.get_num_threads()} threads", n_tokens / t_ref, 0.0)]
        for name, pre, run in graphs:
            for threads in args.threads:
                got, t = score(pre, run, shape, threads, ctx, conts)
                diff = max(
                    float(np.mean(np.abs(np.array(a) - np.array(b))))
                    for a, b in zip(got, ref, strict=True)
                )
                rows.append((f"{name}, {threads} thread(s)", n_tokens / t, diff))
                print(f"{rows[-1][0]}: {rows[-1][1]:.1f} tok/s, mean |dlp| {diff:.4f}", flush=True)
    finally:
        if args.work is None:
            shutil.rmtree(work, ignore_errors=True)
    print(f"{'engine':32} {'score tok/s':>12} {'mean |dlp|':>11}")
    for name, rate, diff in rows:
        print(f"{name:32} {rate:12.1f} {diff:11.4f}")
    usable = [r for r in rows[1:] if r[2] <= 0.05] or rows[1:]
    best = max(usable, key=lambda r: r[1])
    print(
        f"score_ratio={best[1] / rows[0][1]:.2f} max_mean_diff={best[2]:.4f} "
        f"(best engine within 0.05 nats/token: {best[0]})"
    )


if __name__ == "__main__":
    main()

"""A small causal language model trained here, from scratch, on the controlled benchmark
(issue 40): the frozen model of the seed's Table 8, as a language model that answers
``<answer>k</answer>`` through the same generation-and-parse path as a user's checkpoint.

It is *not* a pretrained LLM fine-tune (that needs a GPU); it is a Llama-style model of a
few hundred thousand parameters and a byte-level BPE tokenizer fitted on the fit split,
trained on CPU in minutes. The seed's protocol, at that size:

* rows: the fit split (group ``C0``, split ``train``), each row's full prompt, the exact
  text the redaction audit sends in generation mode (:func:`score_rows` renders it with
  :func:`toolaudit.models.example_text`, raw, no chat), tokenized the way
  :class:`~toolaudit.models.HFModel` encodes a context;
* target: the row's ``answer`` (``<answer>9</answer>`` / ``<answer>1</answer>`` on the
  controlled benchmark, scored ``(k - 1) / 9`` by the audit), then ``</s>``; the loss is
  on the target tokens only;
* label-balanced replacement sampling: each sequence of each batch draws a label with
  probability 1/2, then a row of that label uniformly;
* ``trace=False`` is the seed's no-evidence baseline: every tool section emptied
  (:func:`trim_example` with no tool kept) in training and evaluation.

Seeded and deterministic: ``torch.manual_seed``, deterministic algorithms and a fixed
thread count, so the same data, options and versions give the same weights.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from toolaudit.errors import ConfigError, DataError, MissingDependencyError, check_min
from toolaudit.models import example_text
from toolaudit.progress import Progress
from toolaudit.redaction._trim import trim_example
from toolaudit.traces import Example

logger = logging.getLogger(__name__)

Size = Literal["tiny", "mini", "small"]
SIZES: dict[str, dict[str, int]] = {
    # hidden, layers, heads, feed-forward width, BPE vocabulary (incl. 256 bytes)
    "tiny": {"hidden": 32, "layers": 1, "heads": 2, "ffn": 64, "vocab": 512},
    # two layers: the least depth that can find "the token after complex_id:" (one layer
    # builds the previous-token feature, the next attends to it)
    "mini": {"hidden": 64, "layers": 2, "heads": 4, "ffn": 256, "vocab": 1024},
    "small": {"hidden": 128, "layers": 4, "heads": 4, "ffn": 384, "vocab": 4096},
}
SPECIAL = ("<pad>", "<s>", "</s>")
ANSWER_TOKENS = ("<answer>", "</answer>")


@dataclass(frozen=True, slots=True)
class LMTrainConfig:
    """Options of :func:`train_controlled_lm` (stored in ``training.json``).

    ``steps`` optimizer updates of ``batch_size`` sequences each; ``epochs`` (when given)
    sets ``steps`` to ``ceil(epochs * fit rows / batch_size)`` instead.
    """

    size: Size = "small"
    steps: int = 300
    epochs: float | None = None
    batch_size: int = 4
    lr: float = 2e-3
    warmup: float = 0.1
    seed: int = 0
    trace: bool = True
    threads: int = 2
    n_boot: int = 2000
    max_tool_lines: int | None = None

    def __post_init__(self) -> None:
        if self.size not in SIZES:
            raise ConfigError.invalid("size", tuple(SIZES), self.size)
        check_min("steps", self.steps, 1)
        if self.epochs is not None:
            check_min("epochs", self.epochs, 0.0)
        check_min("batch_size", self.batch_size, 1)
        check_min("seed", self.seed, 0)
        check_min("threads", self.threads, 1)
        check_min("n_boot", self.n_boot, 1)
        if self.max_tool_lines is not None:
            check_min("max_tool_lines", self.max_tool_lines, 1)
        if not (0 < self.lr < 1):
            raise ConfigError.invalid("lr", "a float in (0, 1)", self.lr)


@dataclass(frozen=True, slots=True)
class LMTrainResult:
    """What :func:`train_controlled_lm` wrote: the folder (``hf:`` spec), and the summary
    it stored in ``training.json``."""

    folder: Path
    spec: str
    summary: dict[str, Any]


def _rows(rows: Sequence[Example], cfg: LMTrainConfig) -> list[Example]:
    """The rows as trained and scored: tool sections emptied without the trace, cut to
    ``max_tool_lines`` lines with it (as ``toolaudit redact --max-tool-lines``)."""
    if not cfg.trace:
        return [trim_example(e, keep_tools=()) for e in rows]
    if cfg.max_tool_lines is not None:
        return [trim_example(e, max_lines=cfg.max_tool_lines) for e in rows]
    return list(rows)


def fit_tokenizer(texts: Sequence[str], *, vocab: int) -> Any:
    """A byte-level BPE tokenizer fitted on ``texts``, wrapped as a
    ``PreTrainedTokenizerFast`` with ``<pad>``, ``<s>``, ``</s>`` and the answer tags as
    single (non-special, so decoded) tokens."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    core = Tokenizer(models.BPE())
    core.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    core.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab,
        special_tokens=list(SPECIAL),
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    core.train_from_iterator(list(texts), trainer=trainer)
    tok = PreTrainedTokenizerFast(  # type: ignore[no-untyped-call]
        tokenizer_object=core, pad_token="<pad>", bos_token="<s>", eos_token="</s>"
    )
    tok.add_tokens(list(ANSWER_TOKENS))
    return tok


def _sequences(tok: Any, rows: Sequence[Example]) -> list[tuple[list[int], list[int]]]:
    """``(prompt ids, target ids)`` per row: the prompt encoded as the model layer encodes
    a context, the target (the answer, then ``</s>``) without special tokens."""
    out = []
    for ex in rows:
        if not ex.answer:
            raise DataError(f"row {ex.id}: no answer to train on (field 'answer' is empty)")
        prompt = list(tok(example_text(ex), add_special_tokens=True)["input_ids"])
        target = list(tok(ex.answer, add_special_tokens=False)["input_ids"])
        out.append((prompt, [*target, int(tok.eos_token_id)]))
    return out


def _build_model(tok: Any, size: str, window: int, seed: int) -> Any:
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    s = SIZES[size]
    config = LlamaConfig(
        vocab_size=len(tok),
        hidden_size=s["hidden"],
        intermediate_size=s["ffn"],
        num_hidden_layers=s["layers"],
        num_attention_heads=s["heads"],
        num_key_value_heads=s["heads"],
        max_position_embeddings=window,
        tie_word_embeddings=True,
        pad_token_id=tok.pad_token_id,
        bos_token_id=tok.bos_token_id,
        eos_token_id=tok.eos_token_id,
    )
    torch.manual_seed(seed)
    return LlamaForCausalLM(config)


def _batches(labels: Sequence[int], cfg: LMTrainConfig, steps: int) -> list[list[int]]:
    """Row indices of every batch: label-balanced sampling with replacement."""
    import numpy as np

    rng = np.random.default_rng(cfg.seed)
    by_label = {lab: [i for i, y in enumerate(labels) if y == lab] for lab in sorted(set(labels))}
    keys = list(by_label)
    out = []
    for _ in range(steps):
        picks = rng.integers(0, len(keys), size=cfg.batch_size)
        out.append([int(rng.choice(by_label[keys[int(k)]])) for k in picks])
    return out


def _collate(seqs: Sequence[tuple[list[int], list[int]]], pad: int) -> tuple[Any, Any, Any]:
    import torch

    width = max(len(p) + len(t) for p, t in seqs)
    ids = torch.full((len(seqs), width), pad, dtype=torch.long)
    mask = torch.zeros((len(seqs), width), dtype=torch.long)
    labels = torch.full((len(seqs), width), -100, dtype=torch.long)
    for r, (p, t) in enumerate(seqs):
        n = len(p) + len(t)
        ids[r, :n] = torch.tensor(p + t)
        mask[r, :n] = 1
        labels[r, len(p) : n] = torch.tensor(t)  # loss on the answer tokens only
    return ids, mask, labels


def _lr_at(step: int, steps: int, cfg: LMTrainConfig) -> float:
    warm = max(1, int(cfg.warmup * steps))
    if step < warm:
        return cfg.lr * (step + 1) / warm
    frac = (step - warm) / max(1, steps - warm)
    return cfg.lr * 0.5 * (1 + math.cos(math.pi * frac))


def _loss_summary(losses: Sequence[float]) -> dict[str, Any]:
    n = len(losses)
    tenth = max(1, n // 10)
    points = sorted({0, *range(tenth - 1, n, tenth), n - 1})
    return {
        "steps": n,
        "first_tenth_mean": sum(losses[:tenth]) / tenth,
        "last_tenth_mean": sum(losses[-tenth:]) / tenth,
        "curve": [[i + 1, round(losses[i], 5)] for i in points],
    }


def train_controlled_lm(
    examples: Sequence[Example],
    out: str | Path,
    *,
    config: LMTrainConfig | None = None,
    progress: Progress | None = None,
    data: dict[str, Any] | None = None,
) -> LMTrainResult:
    """Train the controlled benchmark's language model into ``out`` (an ``hf:`` folder
    with ``training.json``) and score it on the test split through the audit's
    generation path; see the module docstring for the protocol. ``data`` (the examples'
    file name and SHA-256) is recorded in ``training.json``, so results can be matched to
    the data the model learned from.

    Example:
        >>> train_controlled_lm(rows, "lm", config=LMTrainConfig(size="tiny"))  # doctest: +SKIP
    """
    try:
        import torch
    except ImportError:
        raise MissingDependencyError("torch", "models") from None
    cfg = config or LMTrainConfig()
    fit = _rows([e for e in examples if e.group == "C0" and e.split == "train"], cfg)
    evals = _rows([e for e in examples if e.split == "test"], cfg)
    if len({e.label for e in fit}) < 2 or len({e.label for e in evals}) < 2:
        raise DataError(
            f"the LM needs both labels in group C0, split train ({len(fit)} rows) and in "
            f"split test ({len(evals)} rows)"
        )
    folder = Path(out)
    folder.mkdir(parents=True, exist_ok=True)
    torch.set_num_threads(cfg.threads)
    torch.use_deterministic_algorithms(True)
    tok = fit_tokenizer([example_text(e) for e in fit], vocab=SIZES[cfg.size]["vocab"])
    seqs = _sequences(tok, fit)
    longest = max(len(p) + len(t) for p, t in seqs)
    # RoPE has no position table, so a wide window costs nothing and leaves room for
    # redacted variants, whose placeholders may tokenize longer than the original text.
    window = max(8192, 4 * longest)
    model = _build_model(tok, cfg.size, window, cfg.seed)
    steps = cfg.steps if cfg.epochs is None else math.ceil(cfg.epochs * len(fit) / cfg.batch_size)
    steps = max(1, steps)
    batches = _batches([e.label for e in fit], cfg, steps)
    opt = torch.optim.AdamW(model.parameters(), lr=cfg.lr, weight_decay=0.01)
    model.train()
    losses: list[float] = []
    start = time.monotonic()
    for step, batch in enumerate(batches):
        for group in opt.param_groups:
            group["lr"] = _lr_at(step, steps, cfg)
        ids, mask, labels = _collate([seqs[i] for i in batch], int(tok.pad_token_id))
        loss = model(input_ids=ids, attention_mask=mask, labels=labels).loss
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        losses.append(float(loss.detach()))
        if progress is not None:
            progress(step + 1, steps, f"training, loss {losses[-1]:.3f}")
    seconds = time.monotonic() - start
    model.eval()
    from transformers.utils import logging as hf_logging

    # "Writing model shards" bars would fill the logs
    hf_logging.disable_progress_bar()  # type: ignore[no-untyped-call]
    model.save_pretrained(folder, safe_serialization=True)
    tok.save_pretrained(folder)
    summary = {
        "kind": "lm",
        "protocol": "seed SFT at CPU size: fit split C0/train, label-balanced replacement "
        "sampling, loss on the answer tokens only",
        "config": {
            "size": cfg.size,
            **SIZES[cfg.size],
            "steps": steps,
            "epochs": cfg.epochs,
            "batch_size": cfg.batch_size,
            "lr": cfg.lr,
            "warmup": cfg.warmup,
            "trace": cfg.trace,
            "max_tool_lines": cfg.max_tool_lines,
            "threads": cfg.threads,
            "window": window,
            "architecture": "LlamaForCausalLM",
        },
        "seed": cfg.seed,
        "parameters": sum(p.numel() for p in model.parameters()),
        "fit_rows": len(fit),
        "fit_positives": sum(e.label for e in fit),
        "longest_sequence_tokens": longest,
        "loss": _loss_summary(losses),
        "train_seconds": round(seconds, 1),
    }
    if data is not None:
        summary["data"] = dict(data)
    summary["eval"] = _evaluate(folder, evals, cfg, progress)
    summary["versions"] = _versions()
    write_training_json(folder, summary)
    return LMTrainResult(folder=folder, spec=f"hf:{folder}", summary=summary)


def _evaluate(
    folder: Path, rows: Sequence[Example], cfg: LMTrainConfig, progress: Progress | None
) -> dict[str, Any]:
    """Held-out AUROC of the saved folder, loaded through the model layer and scored by
    the audit's own generation-and-parse path."""
    from toolaudit.models import load_model
    from toolaudit.redaction._scoring import score_rows
    from toolaudit.stats import bootstrap_auroc

    start = time.monotonic()
    model = load_model(f"hf:{folder}", device="cpu")
    scored = score_rows(model, rows, scoring="generate", progress=progress, label="held-out")
    y = [e.label for e in rows]
    iv = bootstrap_auroc(y, scored.scores, n_boot=cfg.n_boot, seed=cfg.seed)
    return {
        "split": "test",
        "rows": len(rows),
        "positives": sum(y),
        "scoring": "generate",
        "auroc": iv.estimate,
        "ci95": iv.as_list(),
        "n_boot": cfg.n_boot,
        "valid_rate": scored.valid_rate,
        "answers": {a: scored.answers.count(a) for a in sorted(set(scored.answers))},
        "eval_seconds": round(time.monotonic() - start, 1),
    }


def _versions() -> dict[str, str]:
    import tokenizers
    import torch
    import transformers

    from toolaudit import __version__

    return {
        "toolaudit": __version__,
        "torch": torch.__version__,
        "transformers": transformers.__version__,
        "tokenizers": tokenizers.__version__,
    }


def write_training_json(folder: Path, summary: dict[str, Any]) -> Path:
    """Write ``training.json`` (schema version 1) into the model folder."""
    import json
    import os

    path = folder / "training.json"
    from toolaudit.report import machine

    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    record = {"schema_version": 1, "load_average_1min": load, "machine": machine(), **summary}
    path.write_text(json.dumps(record, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return path

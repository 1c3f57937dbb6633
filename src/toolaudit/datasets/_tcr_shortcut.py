"""The controlled TCR-pMHC shortcut benchmark (``tcr-shortcut``).

It mirrors the data of ``seeds/leakage-audit-pt2d-redaction.txt``: cluster C0 supplies
train and validation, peptide-disjoint clusters C1..C5 the test set, with the seed's
Table 2 counts at ``scale=1``. Each example carries the task inputs, five tool sections in
the seed's order, and three prompt-bearing copies of them (``prompt``, ``messages`` and
``meta["extra_info"]``). Everything is sampled independently of the label except the
"PDB id" (see ``_identifiers``), the one planted shortcut whose answer is known.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Iterator
from pathlib import Path

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from toolaudit.datasets._identifiers import GROUP_STRENGTH, STRENGTH, sample_pdb_ids
from toolaudit.datasets._plan import Cell, plan_counts
from toolaudit.datasets._tcr_inputs import (
    Epitope,
    cluster_pool,
    mhc_sequence,
    sample_cdr3a,
    sample_cdr3b,
)
from toolaudit.datasets._tcr_tools import TCR_TOOLS, ToolInputs, render_tools
from toolaudit.progress import Progress
from toolaudit.traces import ChatMessage, Example, ToolSection

__all__ = [
    "DATASET_NAME",
    "DATASET_VERSION",
    "DatasetManifest",
    "SMALL_SCALE",
    "SMALL_STRENGTH",
    "iter_tcr_shortcut",
    "make_tcr_shortcut",
    "write_tcr_shortcut",
]

logger = logging.getLogger(__name__)

DATASET_NAME = "tcr-shortcut"
# Bump when the generated content changes for a given (seed, scale, strength).
# 3: calibrated to the seed's Table 1 (decoy ids in Tool 5, diluting rows in Tools 2 and
# 4, shortcut strength; docs/datasets.md). (2 was a reverted attempt.)
DATASET_VERSION = 3

#: The documented small configuration: the planted finding is visible in seconds
#: (tool 3 char 3-5 first, its interval above 0.5, the full trace's holding 0.5), at a
#: strength above the seed-calibrated ``STRENGTH`` (at small scale the seed's strength
#: leaves tool 3 at chance). Whoever uses it records a ``relaxed_parameter`` fallback.
SMALL_SCALE = 0.2
SMALL_STRENGTH = 3.0

SYSTEM_MESSAGE = (
    "You are an expert structural immunologist. You judge T-cell receptor (TCR) "
    "recognition of peptide-MHC complexes from sequence and tool evidence."
)
TASK = (
    "Predict whether this TCR binds the peptide-MHC complex below. Use the tool results "
    "as evidence. Answer with an integer from 1 (certainly does not bind) to 10 "
    "(certainly binds) inside <answer></answer>."
)
POSITIVE_ANSWER = "<answer>9</answer>"
NEGATIVE_ANSWER = "<answer>1</answer>"


class DatasetManifest(BaseModel):
    """``DIR/dataset.json``: what was generated, how, and the counts per cell."""

    model_config = ConfigDict(extra="forbid")

    name: str
    version: int
    seed: int
    scale: float
    strength: float = STRENGTH
    #: per-cluster multipliers of ``strength`` (GROUP_STRENGTH unless another was asked)
    cluster_strength: dict[str, float] = Field(default_factory=lambda: dict(GROUP_STRENGTH))
    examples: int
    positives: int
    tools: list[str]
    cells: list[dict[str, str | int]]
    sha256: str


def _question(fields: dict[str, str]) -> str:
    return (
        f"{TASK}\n\n## Input\n"
        f"TCRα CDR3: {fields['cdr3a']}\n"
        f"TCRβ CDR3: {fields['cdr3b']}\n"
        f"Peptide: {fields['peptide']}\n"
        f"MHC allele: {fields['mhc_allele']}\n"
        f"MHC sequence: {fields['mhc_sequence']}"
    )


def _evidence(sections: list[tuple[str, str]]) -> str:
    parts = ["<tool_trace>"]
    for step, (name, content) in enumerate(sections, start=1):
        parts.append(
            f'### Step {step}: {name}\n<tool_result name="{name}">\n{content}\n</tool_result>'
        )
    parts.append("</tool_trace>")
    return "\n".join(parts)


def _cell_examples(
    cell: Cell,
    rngs: dict[str, np.random.Generator],
    pool: tuple[list[Epitope], np.ndarray],
    *,
    strength: float = STRENGTH,
    multipliers: dict[str, float] | None = None,
) -> Iterator[Example]:
    labels = np.zeros(cell.total, dtype=np.int64)
    labels[: cell.positives] = 1
    labels = rngs["labels"].permutation(labels)
    pdb_ids = sample_pdb_ids(rngs["ids"], labels, cell.group, strength=strength,
                             multipliers=multipliers)  # fmt: skip
    epitopes, weights = pool
    inputs_rng, tools_rng = rngs["inputs"], rngs["tools"]
    pep_idx = inputs_rng.choice(len(epitopes), size=cell.total, p=weights)
    for k in range(cell.total):
        epitope = epitopes[int(pep_idx[k])]
        fields = {
            "cdr3a": sample_cdr3a(inputs_rng),
            "cdr3b": sample_cdr3b(inputs_rng),
            "peptide": epitope.peptide,
            "mhc_allele": epitope.allele,
            "mhc_sequence": mhc_sequence(epitope.allele),
        }
        x = ToolInputs(fields["cdr3a"], fields["cdr3b"], epitope, tuple(epitopes), pdb_ids[k])
        sections = render_tools(x, tools_rng)
        question = _question(fields)
        evidence = _evidence(sections)
        prompt = f"{question}\n\n## Tool results\n{evidence}"
        label = int(labels[k])
        ex_id = f"{cell.group}-{cell.split}-{k:05d}"
        yield Example(
            id=ex_id,
            label=1 if label else 0,
            group=cell.group,
            split=cell.split,
            fields=fields,
            tools=[ToolSection(name=n, content=c) for n, c in sections],
            prompt=prompt,
            messages=[
                ChatMessage(role="system", content=SYSTEM_MESSAGE),
                ChatMessage(role="user", content=prompt),
            ],
            answer=POSITIVE_ANSWER if label else NEGATIVE_ANSWER,
            meta={
                "pdb_id": pdb_ids[k],
                "peptide": epitope.peptide,
                "extra_info": {"index": ex_id, "question": question, "evidence": evidence},
            },
        )


def iter_tcr_shortcut(
    *,
    scale: float = 1.0,
    seed: int = 0,
    strength: float = STRENGTH,
    cluster_strength: dict[str, float] | None = None,
    progress: Progress | None = None,
) -> Iterator[Example]:
    """Stream the benchmark's examples: cells in Table 2 order, labels shuffled within.

    Independent random streams (numpy ``SeedSequence(seed).spawn``) drive the labels'
    order, the identifiers, the inputs and the tool draws, so no global RNG is touched and
    the same ``(seed, scale)`` always yields the same examples. ``cluster_strength``:
    per-cluster multipliers of ``strength`` (:data:`GROUP_STRENGTH` when None; the
    ``seed`` preset plants the seed's heterogeneity).
    """
    cells = plan_counts(scale=scale)
    labels_ss, ids_ss, inputs_ss, tools_ss, pools_ss = np.random.SeedSequence(seed).spawn(5)
    rngs = {
        "labels": np.random.default_rng(labels_ss),
        "ids": np.random.default_rng(ids_ss),
        "inputs": np.random.default_rng(inputs_ss),
        "tools": np.random.default_rng(tools_ss),
    }
    pool_rng = np.random.default_rng(pools_ss)
    pools = {g: cluster_pool(g, pool_rng) for g in dict.fromkeys(c.group for c in cells)}
    total = sum(c.total for c in cells)
    done = 0
    for cell in cells:
        for example in _cell_examples(cell, rngs, pools[cell.group], strength=strength,
                                      multipliers=cluster_strength):  # fmt: skip
            yield example
            done += 1
            if progress is not None and (done % 500 == 0 or done == total):
                progress(done, total, f"{cell.group}/{cell.split}")


def make_tcr_shortcut(
    *,
    scale: float = 1.0,
    seed: int = 0,
    strength: float = STRENGTH,
    cluster_strength: dict[str, float] | None = None,
) -> list[Example]:
    """All examples of the benchmark as a list (about 30 KB of text each in memory;
    prefer ``iter_tcr_shortcut`` or ``write_tcr_shortcut`` at scale 1). ``strength`` is
    the planted shortcut's log-odds strength (default: calibrated to the seed's Table 1
    at scale 1; 0 plants no shortcut).

    Example:
        >>> examples = make_tcr_shortcut(scale=0.01, seed=0)
        >>> len(examples), [t.name for t in examples[0].tools][2]
        (201, 'thermompnn_ddg')
    """
    return list(iter_tcr_shortcut(scale=scale, seed=seed, strength=strength,
                                  cluster_strength=cluster_strength))  # fmt: skip


def write_tcr_shortcut(
    out_dir: str | Path,
    *,
    scale: float = 1.0,
    seed: int = 0,
    strength: float = STRENGTH,
    cluster_strength: dict[str, float] | None = None,
    progress: Progress | None = None,
) -> Path:
    """Write ``out_dir/examples.jsonl`` and ``out_dir/dataset.json``; return the JSONL path.

    Streams to disk in bounded memory. ``dataset.json`` records the name, version, seed,
    scale, per-cell counts and the JSONL's sha256.
    """
    cells = plan_counts(scale=scale)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    path = out / "examples.jsonl"
    digest = hashlib.sha256()
    n = positives = 0
    with path.open("wb") as fh:
        for example in iter_tcr_shortcut(
            scale=scale,
            seed=seed,
            strength=strength,
            cluster_strength=cluster_strength,
            progress=progress,
        ):
            line = example.model_dump_json().encode("utf-8") + b"\n"
            fh.write(line)
            digest.update(line)
            n += 1
            positives += example.label
    manifest = DatasetManifest(
        name=DATASET_NAME,
        version=DATASET_VERSION,
        seed=seed,
        scale=float(scale),
        strength=float(strength),
        cluster_strength=dict(cluster_strength or GROUP_STRENGTH),
        examples=n,
        positives=positives,
        tools=list(TCR_TOOLS),
        cells=[
            {
                "group": c.group,
                "split": c.split,
                "total": c.total,
                "positives": c.positives,
                "negatives": c.negatives,
            }
            for c in cells
        ],
        sha256=digest.hexdigest(),
    )
    (out / "dataset.json").write_text(manifest.model_dump_json(indent=2) + "\n", encoding="utf-8")
    logger.info("wrote %d examples (%d positive) to %s", n, positives, path)
    return path

"""Small synthetic Examples for the leakage tests (the controlled benchmark is used too)."""

from __future__ import annotations

import numpy as np
import pytest

from toolaudit.traces import Example, ToolSection

WORDS = ["alpha", "beta", "gamma", "delta", "ΣΟΦΙΑ", "naïve", "İstanbul", "東京", "x", "a_b", "42"]
SPACES = [" ", "  ", "\t", "\n", "\u3000", "\xa0", " \x1c ", "\n\n"]


def adversarial_examples(n: int = 90, seed: int = 0) -> list[Example]:
    """Examples with unicode, odd whitespace, empty and whitespace-only sections, and a
    planted id in tool ``t2`` (``file_<id>.csv``) whose first digit predicts the label."""
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        label = int(rng.random() < 0.4)
        sections = []
        for t in range(4):
            k = int(rng.integers(0, 12))
            parts = []
            for _ in range(k):
                parts.append(str(rng.choice(WORDS)))
                parts.append(str(rng.choice(SPACES)))
            text = "".join(parts)
            if t == 2:
                first = rng.choice(["7", "8"]) if label else rng.choice(["1", "2", "8"])
                text = f"model: m\npath:\n/d/file_{first}{rng.integers(100, 999)}.csv\n" + text
            if t == 1 and i % 7 == 0:
                text = ""
            if t == 3 and i % 5 == 0:
                text = " \t "
            sections.append(ToolSection(name=f"t{t}", content=text))
        split = "train" if i < int(n * 0.7) else "test"
        out.append(Example(id=f"e{i}", label=label, group=f"G{i % 3}", split=split, tools=sections))
    return out


@pytest.fixture(scope="module")
def adversarial() -> list[Example]:
    """90 adversarial examples (see ``adversarial_examples``)."""
    return adversarial_examples()


@pytest.fixture(scope="module")
def tcr_small() -> list[Example]:
    """The controlled benchmark at a small scale (160 train and all test rows)."""
    from toolaudit.datasets import make_tcr_shortcut

    rows = make_tcr_shortcut(scale=0.02, seed=0)
    train = [e for e in rows if e.split == "train"][:160]
    return train + [e for e in rows if e.split == "test"]

"""The benchmark's one planted shortcut: "PDB ids" assigned by deposition batch.

Each modeled complex gets a four-character id like the real PDB's (a digit 1-9 and
three upper-case alphanumerics). The first two characters name the deposition batch the
structural template came from. Batch membership has nothing to do with biology, but
binders were modeled disproportionately from some batches, so the leading characters
correlate with the label. By default the effect has the same direction in every cluster
(its strength varies a little per cluster, :data:`GROUP_STRENGTH`), so a
prefix-to-binder-rate lookup learned on C0 transfers to every test cluster; the ``seed``
preset (:data:`SEED_CLUSTER_STRENGTH`) instead plants the seed's heterogeneity: weak in
C1 and C3, none in C5. Nothing else in an example depends on the label.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = [
    "BATCHES",
    "CLUSTER_PRESETS",
    "GROUP_STRENGTH",
    "SEED_CLUSTER_STRENGTH",
    "STRENGTH",
    "batch_probabilities",
    "parse_cluster_strength",
    "prefix_auroc",
    "sample_decoy_ids",
    "sample_pdb_ids",
    "validate_strength",
]

_ALNUM = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"
_LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"

# Leading digit -> (relative deposition volume, binder log-odds effect of the digit).
_DIGITS: dict[str, tuple[float, float]] = {
    "1": (0.6, -0.9),
    "2": (1.0, 1.1),
    "3": (1.2, -0.3),
    "4": (1.1, 0.2),
    "5": (1.3, 0.7),
    "6": (1.4, -0.8),
    "7": (1.2, 0.0),
    "8": (1.0, 0.4),
    "9": (0.7, -0.5),
}
# Leading digit -> five second characters; batch effect within the digit in that order.
_SECOND: dict[str, str] = {
    "1": "7QB3M",
    "2": "1XE8K",
    "3": "C05RW",
    "4": "9HT2A",
    "5": "N6F1Y",
    "6": "4LJ9D",
    "7": "P2U7G",
    "8": "0SZ5V",
    "9": "3K8HT",
}
_WITHIN = (0.3, -0.6, 0.6, 0.0, -0.3)

# Overall strength of the label effect (log-odds scale) and per-cluster multipliers.
STRENGTH = 1.17
GROUP_STRENGTH: dict[str, float] = {
    "C0": 1.0,
    "C1": 0.9,
    "C2": 1.05,
    "C3": 0.95,
    "C4": 1.15,
    "C5": 0.85,
}
#: The seed's per-cluster pattern (Table 6 and Appendix C: the lookup is weak in C1 and C3
#: and does not transfer to C5): multipliers calibrated so that the ideal 2-character
#: prefix lookup (:func:`prefix_auroc`) reaches the seed's Table 6 2-digit value in each
#: cluster (0.5794, 0.7416, 0.5946, 0.7716, 0.4967 in C1-C5; C5's 0.4967 is chance, so 0).
#: C0, where the lookup is learned, keeps 1.
SEED_CLUSTER_STRENGTH: dict[str, float] = {
    "C0": 1.0,
    "C1": 0.317,
    "C2": 1.03,
    "C3": 0.379,
    "C4": 1.185,
    "C5": 0.0,
}
CLUSTER_PRESETS: dict[str, dict[str, float]] = {
    "default": GROUP_STRENGTH,
    "seed": SEED_CLUSTER_STRENGTH,
}


@dataclass(frozen=True, slots=True)
class Batch:
    """A deposition batch: its two-character id prefix, volume and binder log-odds."""

    prefix: str
    volume: float
    effect: float


BATCHES: tuple[Batch, ...] = tuple(
    Batch(digit + second, volume, digit_effect + _WITHIN[k])
    for digit, (volume, digit_effect) in _DIGITS.items()
    for k, second in enumerate(_SECOND[digit])
)


def validate_strength(value: object) -> float:
    """``value`` as a strength in [0, 8]; anything else raises ``ConfigError`` (exit 2)."""
    from toolaudit.errors import ConfigError

    try:
        out = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise ConfigError.invalid("strength", "a number in [0, 8]", value) from None
    if not 0.0 <= out <= 8.0:
        raise ConfigError.invalid("strength", "a number in [0, 8]", value)
    return out


def parse_cluster_strength(text: str) -> dict[str, float]:
    """Per-cluster multipliers of the shortcut's strength: a preset name (``default``,
    ``seed``) or ``C5=0,C2=1.4`` (those clusters changed, the others as by default); a
    bad value raises ``ConfigError`` (exit 2).

    >>> parse_cluster_strength("C5=0")["C5"], parse_cluster_strength("seed")["C1"]
    (0.0, 0.317)
    """
    from toolaudit.errors import ConfigError

    text = text.strip()
    if text in CLUSTER_PRESETS:
        return dict(CLUSTER_PRESETS[text])
    out = dict(GROUP_STRENGTH)
    for part in filter(None, (p.strip() for p in text.split(","))):
        group, eq, value = part.partition("=")
        if not eq or group.strip() not in GROUP_STRENGTH:
            raise ConfigError.invalid(
                "cluster_strength", f"{', '.join(CLUSTER_PRESETS)} or CLUSTER=MULTIPLIER,... "
                f"with clusters {', '.join(GROUP_STRENGTH)}", part)  # fmt: skip
        try:
            mult = float(value)
        except ValueError:
            raise ConfigError.invalid("cluster_strength", "a number >= 0", part) from None
        if not 0.0 <= mult <= 4.0:
            raise ConfigError.invalid("cluster_strength", "a multiplier in [0, 4]", part)
        out[group.strip()] = mult
    return out


def batch_probabilities(
    label: int,
    group: str,
    *,
    strength: float = STRENGTH,
    multipliers: dict[str, float] | None = None,
) -> np.ndarray:
    """P(batch | label, group) over ``BATCHES``: volume times exp(+-effect/2), the
    effect scaled by ``strength`` (0: no label signal at all) and the group's multiplier
    (``multipliers``, :data:`GROUP_STRENGTH` by default)."""
    strength = strength * (multipliers or GROUP_STRENGTH).get(group, 1.0)
    sign = 1.0 if label == 1 else -1.0
    volume = np.array([b.volume for b in BATCHES])
    effect = np.array([b.effect for b in BATCHES])
    weights = volume * np.exp(sign * strength * effect / 2.0)
    return weights / weights.sum()


def _systematic(rng: np.random.Generator, probs: np.ndarray, n: int) -> np.ndarray:
    """``n`` batch indices whose counts follow ``probs`` within one per batch, shuffled.

    Systematic sampling keeps each cluster's label-conditional batch mix close to the
    plan even for a handful of positives, so the shortcut's strength per cluster does not
    hinge on sampling luck at small scale.
    """
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    points = (rng.random() + np.arange(n)) / n
    idx = np.searchsorted(np.cumsum(probs), points, side="right")
    idx = np.minimum(idx, len(probs) - 1)
    return rng.permutation(idx)


def sample_pdb_ids(
    rng: np.random.Generator,
    labels: np.ndarray,
    group: str,
    *,
    strength: float = STRENGTH,
    multipliers: dict[str, float] | None = None,
) -> list[str]:
    """One four-character id per label: a batch prefix drawn given the label, then a
    uniformly random alphanumeric and a uniformly random letter (so the rest of the id
    carries no label signal, and an id, always holding a letter, never collides with a
    number elsewhere in the text)."""
    labels = np.asarray(labels)
    batch_idx = np.empty(len(labels), dtype=np.int64)
    for label in (0, 1):
        where = np.flatnonzero(labels == label)
        batch_idx[where] = _systematic(
            rng,
            batch_probabilities(label, group, strength=strength, multipliers=multipliers),
            len(where),
        )
    third = rng.integers(0, len(_ALNUM), size=len(labels))
    fourth = rng.integers(0, len(_LETTERS), size=len(labels))
    return [
        BATCHES[b].prefix + _ALNUM[s0] + _LETTERS[s1]
        for b, s0, s1 in zip(batch_idx.tolist(), third.tolist(), fourth.tolist(), strict=True)
    ]


def sample_decoy_ids(rng: np.random.Generator, n: int) -> list[str]:
    """``n`` chain-qualified reference ids drawn by deposition volume alone, never by
    label: the reference complexes a structure tool lists beside the modeled one.

    Each is a batch prefix, an alphanumeric, a digit and a lower-case chain letter (as in
    ``2XE5a``). They make the id's word-start character n-grams (`` 2x``, `` 2xe``)
    common, label-free text in Tool 5, as the seed's numeric ids collide with Tool 5's
    other numbers, so Tool 5 carries the id more weakly than Tool 3, whose
    ``inference_<id>`` context is unique. By construction no row id (four characters
    ending in an upper-case letter) is a substring of a decoy, and a five-character
    token is not a PDB id to the redaction detector, so redacting the id class leaves
    decoys alone.
    """
    volume = np.array([b.volume for b in BATCHES])
    idx = rng.choice(len(BATCHES), size=n, p=volume / volume.sum())
    third = rng.integers(0, len(_ALNUM), size=n)
    fourth = rng.integers(0, 10, size=n)
    chain = rng.integers(0, 5, size=n)
    return [
        f"{BATCHES[b].prefix}{_ALNUM[s0]}{s1}{'abcde'[c]}"
        for b, s0, s1, c in zip(
            idx.tolist(), third.tolist(), fourth.tolist(), chain.tolist(), strict=True
        )
    ]


def prefix_auroc(
    group: str,
    *,
    chars: int,
    strength: float = STRENGTH,
    multipliers: dict[str, float] | None = None,
) -> float:
    """Population AUROC of the ideal prefix lookup on ``chars`` (1 or 2) leading
    characters for ``group``: the ceiling any prefix lookup can reach there."""
    p1 = batch_probabilities(1, group, strength=strength, multipliers=multipliers)
    p0 = batch_probabilities(0, group, strength=strength, multipliers=multipliers)
    keys = [b.prefix[:chars] for b in BATCHES]
    uniq = sorted(set(keys))
    q1 = np.array([sum(p for p, k in zip(p1, keys, strict=True) if k == u) for u in uniq])
    q0 = np.array([sum(p for p, k in zip(p0, keys, strict=True) if k == u) for u in uniq])
    order = np.argsort(q1 / q0, kind="stable")
    auc, below = 0.0, 0.0
    for i in order:
        auc += q1[i] * (below + 0.5 * q0[i])
        below += q0[i]
    return float(auc)

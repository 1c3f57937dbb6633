"""Label-independent inputs of the TCR benchmark: epitope clusters, MHC alleles, CDR3s.

Every function here draws from distributions that do not see the label. Peptides come
from a per-cluster pool (an epitope cluster: a known epitope and close variants of it),
so the clusters are peptide-disjoint as in the seed's splits.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import numpy as np

__all__ = [
    "AMINO_ACIDS",
    "Epitope",
    "cluster_pool",
    "mhc_sequence",
    "sample_cdr3a",
    "sample_cdr3b",
]

AMINO_ACIDS = "ACDEFGHIKLMNPQRSTVWY"


@dataclass(frozen=True, slots=True)
class Epitope:
    """A peptide with its restricting MHC allele and source annotation."""

    peptide: str
    allele: str
    pathology: str
    antigen: str


# Known epitopes used as cluster centroids: (peptide, allele, pathology, antigen).
_CENTROIDS: dict[str, tuple[tuple[str, str, str, str], ...]] = {
    "C0": (
        ("GILGFVFTL", "HLA-A*02:01", "Influenza", "Matrix protein M1"),
        ("NLVPMVATV", "HLA-A*02:01", "Cytomegalovirus (CMV)", "pp65"),
        ("GLCTLVAML", "HLA-A*02:01", "Epstein Barr virus (EBV)", "BMLF1"),
        ("ELAGIGILTV", "HLA-A*02:01", "Melanoma", "MART-1"),
        ("RAKFKQLL", "HLA-B*08:01", "Epstein Barr virus (EBV)", "BZLF1"),
        ("AVFDRKSDAK", "HLA-A*11:01", "Epstein Barr virus (EBV)", "EBNA3B"),
        ("TPRVTGGGAM", "HLA-B*07:02", "Cytomegalovirus (CMV)", "pp65"),
        ("KRWIILGLNK", "HLA-B*27:05", "Human immunodeficiency virus (HIV)", "Gag p24"),
    ),
    "C1": (("YLQPRTFLL", "HLA-A*02:01", "SARS-CoV-2", "Spike glycoprotein"),),
    "C2": (("IVTDFSVIK", "HLA-A*11:01", "Epstein Barr virus (EBV)", "EBNA3B"),),
    "C3": (("RPHERNGFTVL", "HLA-B*07:02", "Cytomegalovirus (CMV)", "pp65"),),
    "C4": (("KLVALGINAV", "HLA-A*02:01", "Hepatitis C virus (HCV)", "NS3"),),
    "C5": (("FLKEKGGL", "HLA-B*08:01", "Human immunodeficiency virus (HIV)", "Nef"),),
}

# HLA-A*02:01 alpha-1/alpha-2 domains; other alleles differ at polymorphic positions.
_A0201 = (
    "GSHSMRYFFTSVSRPGRGEPRFIAVGYVDDTQFVRFDSDAASQRMEPRAPWIEQEGPEYWDGETRKVKAHSQTHRVD"
    "LGTLRGYYNQSEAGSHTVQRMYGCDVGSDWRFLRGYHQYAYDGKDYIALKEDLRSWTAADMAAQTTKHKWEAAHVAEQ"
    "LRAYLEGTCVEWLRRYLENGKETLQRT"
)
_POLYMORPHIC = (9, 45, 62, 63, 66, 67, 70, 74, 76, 77, 80, 81, 95, 97, 99, 114, 116, 152, 156)


def _digest(*parts: str) -> bytes:
    return hashlib.sha256("|".join(parts).encode()).digest()


def mhc_sequence(allele: str) -> str:
    """A fixed alpha-1/alpha-2 sequence for ``allele`` (A*02:01 itself; others derived
    deterministically at the polymorphic positions, so the value never depends on a seed)."""
    if allele == "HLA-A*02:01":
        return _A0201
    seq = list(_A0201)
    digest = _digest("mhc", allele)
    for k, pos in enumerate(_POLYMORPHIC):
        seq[pos - 1] = AMINO_ACIDS[digest[k] % 20]
    return "".join(seq)


def _variant(peptide: str, rng: np.random.Generator) -> str:
    """A close variant: one or two substitutions away from the anchors (P2 and the C-terminus)."""
    seq = list(peptide)
    free = [i for i in range(len(seq)) if i not in (1, len(seq) - 1)]
    for pos in rng.choice(free, size=int(rng.integers(1, 3)), replace=False):
        seq[int(pos)] = AMINO_ACIDS[int(rng.integers(0, 20))]
    return "".join(seq)


def cluster_pool(group: str, rng: np.random.Generator) -> tuple[list[Epitope], np.ndarray]:
    """The epitope pool of one cluster and its sampling weights (Zipf-like, as real
    benchmarks are dominated by a few epitopes). Pools of different clusters are disjoint."""
    per_centroid = 6 if group == "C0" else 8
    pool: list[Epitope] = []
    seen: set[str] = set()
    for peptide, allele, pathology, antigen in _CENTROIDS[group]:
        members = [peptide]
        while len(members) < per_centroid:
            cand = _variant(peptide, rng)
            if cand not in seen and cand not in members:
                members.append(cand)
        seen.update(members)
        pool.extend(Epitope(m, allele, pathology, antigen) for m in members)
    weights = 1.0 / (1.0 + rng.permutation(len(pool)))
    return pool, weights / weights.sum()


_CDR3B_V = ("CASS", "CASSL", "CASSP", "CASRP", "CSAR", "CASSQ", "CATS", "CSVE", "CASSY", "CAWS")
_CDR3B_J = (
    "YEQYF",
    "TEAFF",
    "NEQFF",
    "ETQYF",
    "GELFF",
    "TDTQYF",
    "YNEQFF",
    "SYEQYF",
    "QPQHF",
    "GYTF",
    "NTEAFF",
    "SPLHF",
)
_CDR3A_V = ("CAV", "CAVR", "CAE", "CAL", "CAS", "CAMR", "CAG", "CIL", "CAA", "CVV")
_CDR3A_J = (
    "NKLTF",
    "YIPTF",
    "GKLIF",
    "NTGKLIF",
    "SGYALNF",
    "DKLIF",
    "QGAQKLVF",
    "GNQFYF",
    "TDSWGKLQF",
    "YNQGGKLIF",
)
# N-region residues, weighted toward those that dominate real junctions.
_N_REGION = "GGGSSSAAPPLLRRDDEETTQQNNVYKW"


def _junction(
    rng: np.random.Generator, v: tuple[str, ...], j: tuple[str, ...], lo: int, hi: int
) -> str:
    middle = rng.integers(0, len(_N_REGION), size=int(rng.integers(lo, hi + 1)))
    return (
        v[int(rng.integers(0, len(v)))]
        + "".join(_N_REGION[k] for k in middle.tolist())
        + j[int(rng.integers(0, len(j)))]
    )


def sample_cdr3b(rng: np.random.Generator) -> str:
    """A plausible CDR3-beta (V-gene start, random N-region, J-gene end; 10-19 residues)."""
    return _junction(rng, _CDR3B_V, _CDR3B_J, 1, 7)


def sample_cdr3a(rng: np.random.Generator) -> str:
    """A plausible CDR3-alpha (V-gene start, random N-region, J-gene end)."""
    return _junction(rng, _CDR3A_V, _CDR3A_J, 1, 5)

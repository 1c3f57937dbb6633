"""The five serialized tool results of the TCR benchmark, in the seed's fixed order.

Each renderer turns label-independent inputs and draws into ``key: value`` lines framed
by a per-tool banner (the "format" token class that format redaction targets). Only the
identifier passed in ``ToolInputs.pdb_id`` carries label information; it is written in
Tool 3 as ``ThermoMPNN_inference_<id>.csv`` and in Tool 5 as ``complex_id: <id>``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from toolaudit.datasets._identifiers import sample_decoy_ids
from toolaudit.datasets._tcr_inputs import AMINO_ACIDS, Epitope

__all__ = ["TCR_FORMAT_PATTERNS", "TCR_TOOLS", "ToolInputs", "render_tools"]

TCR_TOOLS: tuple[str, ...] = (
    "cdr3b_biophysics",
    "mcpas_retrieval",
    "thermompnn_ddg",
    "stability_summary",
    "interface_analysis",
)

# Regular expressions matching the scaffolding this generator emits (the "format" token
# class of format redaction): trace banners, step headers, XML-ish tags, signal headers
# and the field names of ``key: value`` lines.
TCR_FORMAT_PATTERNS: tuple[str, ...] = (
    r"=== TOOL RESULT :: [a-z_0-9]+ ===",
    r"=== END [a-z_0-9]+ ===",
    r"\[trace\] step=\d+ tool=[a-z_0-9]+ status=\w+",
    r"### Step \d+: [a-z_0-9]+",
    r"## (?:Input|Tool results)",
    r"</?tool_trace>",
    r"<tool_result name=\"[a-z_0-9]+\">",
    r"</tool_result>",
    r"\b[A-Z_]+_SIGNAL:",
    r"(?<![^\n]) *[a-z][a-z0-9_]*(?=: )",
)

# Residue tables: Kyte-Doolittle hydropathy, Vihinen flexibility, a Miyazawa-Jernigan-like
# contact energy (more negative = stronger contact) and residue mass (Da).
_HYDRO = dict(zip(AMINO_ACIDS, (1.8, 2.5, -3.5, -3.5, 2.8, -0.4, -3.2, 4.5, -3.9, 3.8, 1.9, -3.5, -1.6, -3.5, -4.5, -0.8, -0.7, 4.2, -0.9, -1.3), strict=True))  # fmt: skip
_FLEX = dict(zip(AMINO_ACIDS, (0.984, 0.906, 1.068, 1.094, 0.915, 1.031, 0.950, 0.927, 1.102, 0.935, 0.952, 1.048, 1.049, 1.037, 1.008, 1.046, 0.997, 0.931, 0.904, 0.929), strict=True))  # fmt: skip
_CONTACT = dict(zip(AMINO_ACIDS, (-2.2, -3.6, -1.3, -1.3, -4.4, -1.7, -2.4, -4.3, -1.1, -4.4, -3.9, -1.5, -1.8, -1.5, -1.8, -1.5, -1.8, -3.8, -4.3, -3.2), strict=True))  # fmt: skip
_MASS = dict(zip(AMINO_ACIDS, (71.08, 103.14, 115.09, 129.12, 147.18, 57.05, 137.14, 113.16, 128.17, 113.16, 131.19, 114.10, 97.12, 128.13, 156.19, 87.08, 101.10, 99.13, 186.21, 163.18), strict=True))  # fmt: skip
# Calibration constants (docs/datasets.md, "Calibration to the seed's Table 1").
#: label-free reference ids Tool 5 lists beside the modeled complex (see sample_decoy_ids):
#: they make Tool 5 a weak carrier of the id, as in the seed
DECOYS = 4
#: ThermoMPNN prediction rows Tool 3 previews
PREVIEW_ROWS = 44
#: McPAS matches Tool 2 lists (label-free variable text: it dilutes the full trace)
MATCHES = 20
#: CDR3b positions whose full 19-mutant ddG scan Tool 4 lists (label-free numbers that
#: dilute the full trace as the seed's real sections do; 30 covers every position)
SCAN_POSITIONS = 30
_HYDROPHOBIC = set("AVILMFWC")
_POLAR = set("STNQGYH")


@dataclass(frozen=True, slots=True)
class ToolInputs:
    """What the tools receive for one example (never the label)."""

    cdr3a: str
    cdr3b: str
    epitope: Epitope
    pool: tuple[Epitope, ...]
    pdb_id: str


def _banner(name: str, step: int, rng: np.random.Generator) -> str:
    runtime = int(rng.integers(18, 2400))
    return (
        f"=== TOOL RESULT :: {name} ===\n"
        f"[trace] step={step} tool={name} status=OK runtime_ms={runtime}"
    )


def _footer(name: str) -> str:
    return f"=== END {name} ==="


def _pct(count: int, n: int) -> str:
    return f"{count}/{100.0 * count / n:.1f}"


def _biophysics(x: ToolInputs, rng: np.random.Generator, ddg: np.ndarray, start: int) -> str:
    seq = x.cdr3b
    n = len(seq)
    charge = sum(seq.count(a) for a in "KR") - sum(seq.count(a) for a in "DE")
    hydro = [_HYDRO[a] for a in seq]
    flex = [_FLEX[a] for a in seq]
    contact = [_CONTACT[a] for a in seq]
    mid = n // 2
    central = seq[mid - 2 : mid + 2]
    mean_flex = sum(flex) / n
    mean_contact = sum(contact) / n
    lines = [
        _banner("cdr3b_biophysics", 1, rng),
        "tool_version: cdr3-biophys 1.4.2",
        "scale_sources: hydropathy=Kyte-Doolittle; flexibility=Vihinen; contact=Miyazawa-Jernigan",
        "window_size: 5",
        f"candidate_cdr3b: {seq}",
        f"length: {n}; charge_net: {charge:+d}",
        f"hydrophobic_count_pct: {_pct(sum(a in _HYDROPHOBIC for a in seq), n)}",
        f"polar_count_pct: {_pct(sum(a in _POLAR for a in seq), n)}",
        f"positive_count_pct: {_pct(sum(a in 'KR' for a in seq), n)}",
        f"negative_count_pct: {_pct(sum(a in 'DE' for a in seq), n)}",
        f"fraction_charged: {sum(a in 'DEKR' for a in seq) / n:.3f}",
        f"aromatic_count_pct: {_pct(sum(a in 'FWY' for a in seq), n)}",
        f"glycine_proline_count: {seq.count('G')}/{seq.count('P')}",
        f"central_region_sequence: {central}",
        f"central_region_start_end: {mid - 1}-{mid + 2}",
        f"mean_hydropathy_kd: {sum(hydro) / n:.3f}",
        f"mean_flexibility_index: {mean_flex:.3f}",
        f"contact_potential_sum: {sum(contact):.2f}",
        f"contact_potential_mean: {mean_contact:.3f}",
        f"molecular_weight_da: {sum(_MASS[a] for a in seq) + 18.02:.1f}",
        f"n_terminal_motif: {seq[:4]}",
        f"c_terminal_motif: {seq[-5:]}",
        f"hydrophobic_moment_est: {abs(sum(h * (-1) ** i for i, h in enumerate(hydro))) / n:.3f}",
        f"max_hydropathy_window5: {max(sum(hydro[i : i + 5]) / 5 for i in range(n - 4)):.3f}",
        f"min_hydropathy_window5: {min(sum(hydro[i : i + 5]) / 5 for i in range(n - 4)):.3f}",
        "residue_profile:",
    ]
    for i, a in enumerate(seq):
        lines.append(
            f"  pos={start + i} res={a} hydropathy={_HYDRO[a]:+.1f} "
            f"flex={_FLEX[a]:.3f} contact={_CONTACT[a]:.2f}"
        )
    charge_tag = "NEGATIVE_BIAS" if charge <= -2 else "POSITIVE_BIAS" if charge >= 2 else "NEUTRAL"
    flex_tag = (
        "HIGH_FLEXIBILITY"
        if mean_flex > 1.02
        else "LOW_FLEXIBILITY"
        if mean_flex < 0.97
        else "BALANCED_FLEXIBILITY"
    )
    contact_tag = "STRONG" if mean_contact < -2.8 else "WEAK" if mean_contact > -2.0 else "MODERATE"
    lines += [
        "BIOPHYSICS_SIGNAL:",
        f"charge={charge_tag};",
        f"flexibility={flex_tag};",
        f"contact={contact_tag}_CONTACT_POTENTIAL",
        _footer("cdr3b_biophysics"),
    ]
    return "\n".join(lines)


def _identity(a: str, b: str) -> float:
    same = sum(x == y for x, y in zip(a, b, strict=False))
    return 2.0 * same / (len(a) + len(b))


def _mutate(seq: str, rng: np.random.Generator) -> str:
    out = list(seq)
    for _ in range(int(rng.integers(1, 4))):
        pos = int(rng.integers(3, max(4, len(out) - 2)))
        out[pos] = AMINO_ACIDS[int(rng.integers(0, 20))]
    if rng.random() < 0.3:
        out.insert(int(rng.integers(3, len(out) - 2)), AMINO_ACIDS[int(rng.integers(0, 20))])
    return "".join(out)


def _mcpas(x: ToolInputs, rng: np.random.Generator, ddg: np.ndarray, start: int) -> str:
    ep = x.epitope
    hits = int(rng.integers(3, 260))
    known = max(1, hits - int(rng.integers(0, max(2, hits // 4))))
    matches = sorted(
        (
            (_mutate(x.cdr3b, rng), x.pool[int(rng.integers(0, len(x.pool)))])
            for _ in range(MATCHES)
        ),
        key=lambda m: -_identity(x.cdr3b, m[0]),
    )
    best = matches[0][0]
    best_id = _identity(x.cdr3b, best)
    lines = [
        _banner("mcpas_retrieval", 2, rng),
        "database: McPAS-TCR (release 2022-11)",
        "total_entries: 40731",
        "search_mode: exact epitope + CDR3b similarity (global alignment)",
        "similarity_metric: identity over aligned length; min_identity_reported: 0.60",
        f"query_cdr3b: {x.cdr3b}",
        f"query_epitope: {ep.peptide}",
        f"query_mhc: {ep.allele}",
        f"exact_epitope_hits: {hits}",
        f"known_cdr3b_count_for_exact_epitope: {known}",
        f"exact_cdr3b_match: {'YES' if best == x.cdr3b else 'NO'}",
        f"most_similar_known_cdr3b: {best}",
        f"most_similar_sequence_identity: {best_id:.4f}",
        f"epitope_pathology: {ep.pathology}",
        f"epitope_antigen_protein: {ep.antigen}",
        "top_matches:",
    ]
    for rank, (cdr3, hit) in enumerate(matches, start=1):
        lines.append(
            f"  rank={rank} cdr3b={cdr3} identity={_identity(x.cdr3b, cdr3):.3f} "
            f"epitope={hit.peptide} mhc={hit.allele} pathology={hit.pathology}"
        )
    tag = "STRONG" if best_id >= 0.85 else "MODERATE" if best_id >= 0.7 else "WEAK"
    lines += [
        "DATABASE_SUPPORT_SIGNAL:",
        f"{tag}_DATABASE_SUPPORT",
        _footer("mcpas_retrieval"),
    ]
    return "\n".join(lines)


def _mutant_letters(wt: str) -> list[str]:
    return [a for a in AMINO_ACIDS if a != wt]


def _thermompnn(x: ToolInputs, rng: np.random.Generator, ddg: np.ndarray, start: int) -> str:
    chain_len = int(rng.integers(108, 126))
    rows = rng.choice(ddg.size, size=min(PREVIEW_ROWS, ddg.size), replace=False)
    rows.sort()
    preview = []
    for flat in rows.tolist():
        pos, k = divmod(flat, 19)
        wt = x.cdr3b[pos]
        preview.append((wt, start + pos, _mutant_letters(wt)[k], float(ddg[pos, k])))
    values = np.array([row[3] for row in preview])
    lines = [
        _banner("thermompnn_ddg", 3, rng),
        "model: ThermoMPNN (checkpoint thermoMPNN_default.pt)",
        "input_structure: modeled TCR-pMHC complex (TCRbeta chain scanned)",
        "thermompnn_csv_path:",
        f"/data/pipeline/thermompnn/outputs/ThermoMPNN_inference_{x.pdb_id}.csv",
        f"chain_length: {chain_len}",
        f"total_predictions: {chain_len * 19}",
        f"cdr3b_region: {start}-{start + len(x.cdr3b) - 1}",
        "preview_columns: mutation, position, wildtype, mutant, ddg_pred_kcal_per_mol",
        "preview_rows:",
    ]
    lines += [f"  {wt}{pos}{mut}, {pos}, {wt}, {mut}, {val:.3f}" for wt, pos, mut, val in preview]
    mean = float(values.mean())
    lines += [
        f"preview_ddg_mean: {mean:.3f} kcal/mol",
        f"preview_ddg_min: {values.min():.3f} kcal/mol",
        f"preview_ddg_max: {values.max():.3f} kcal/mol",
        f"preview_destabilizing_fraction: {float((values > 1.0).mean()):.3f}",
        "THERMOMPNN_PREVIEW_SIGNAL:",
        "PREVIEW_SHOWS DESTABILIZING_RISK" if mean > 1.0 else "PREVIEW_SHOWS TOLERANT_PROFILE",
        _footer("thermompnn_ddg"),
    ]
    return "\n".join(lines)


def _stability(x: ToolInputs, rng: np.random.Generator, ddg: np.ndarray, start: int) -> str:
    per_pos = ddg.mean(axis=1)
    tolerant = int((per_pos < 0.3).sum())
    sensitive = int((per_pos >= 0.8).sum())
    moderate = len(per_pos) - tolerant - sensitive
    hot = int(per_pos.argmax())
    lines = [
        _banner("stability_summary", 4, rng),
        "source: thermompnn_ddg predictions (Biomni positional stability adapter)",
        f"predictions_used: {int(rng.integers(108, 126)) * 19}",
        f"cdr3b_sequence: {x.cdr3b}",
        "mapped_sequence_check: PASS",
        "class_thresholds: tolerant<0.30; moderate<0.80; sensitive>=0.80 kcal/mol",
        f"avg_position_sensitivity_ddg: {float(per_pos.mean()):.3f} kcal/mol",
        f"counts_tolerant_moderate_sensitive: {tolerant}/{moderate}/{sensitive}",
        f"hotspot: {x.cdr3b[hot]}{start + hot} (mean_ddg={float(per_pos[hot]):.3f})",
        "position_rows:",
    ]
    for i, a in enumerate(x.cdr3b):
        cls = "sensitive" if per_pos[i] >= 0.8 else "tolerant" if per_pos[i] < 0.3 else "moderate"
        worst = int(ddg[i].argmax())
        lines.append(
            f"  pos={start + i} wt={a} mean_ddg={per_pos[i]:.3f} sd={float(ddg[i].std()):.3f} "
            f"max_ddg={float(ddg[i, worst]):.3f} worst_mutant={_mutant_letters(a)[worst]} "
            f"class={cls}"
        )
    if SCAN_POSITIONS:
        lines.append("mutant_scan_rows:")
        for i in range(min(SCAN_POSITIONS, len(x.cdr3b))):
            muts = _mutant_letters(x.cdr3b[i])
            lines.append(
                f"  pos={start + i} "
                + " ".join(
                    f"{m}={float(v):.2f}" for m, v in zip(muts, ddg[i].tolist(), strict=True)
                )
            )
    stable = sensitive <= max(1, len(per_pos) // 6)
    lines += [
        "STRUCTURAL_STABILITY_SIGNAL:",
        "STRUCTURALLY_STABLE" if stable else "STRUCTURALLY_FRAGILE",
        _footer("stability_summary"),
    ]
    return "\n".join(lines)


def _interface(x: ToolInputs, rng: np.random.Generator, ddg: np.ndarray, start: int) -> str:
    seq, pep = x.cdr3b, x.epitope.peptide
    polar = float(rng.uniform(30.0, 140.0))
    apolar = float(rng.uniform(25.0, 130.0))
    n_contact = int(rng.integers(1, min(len(seq), 9) + 1))
    residues = np.sort(rng.choice(len(seq), size=n_contact, replace=False))
    charged = sum(a in "DEKR" for a in seq) + sum(a in "DEKR" for a in pep)
    lines = [
        _banner("interface_analysis", 5, rng),
        f"complex_id: {x.pdb_id}",
        f"reference_complexes: {' '.join(sample_decoy_ids(rng, DECOYS))}",
        "method: FreeSASA 2.0 buried surface area; 4.0 A contact cutoff",
        "interface_partners: TCRB CDR3 loop vs peptide (chain C) + MHC heavy chain (chain A)",
        "probe_radius_A: 1.4; hbond_cutoff_A: 3.5; salt_bridge_cutoff_A: 4.0",
        f"peptide: {pep}",
        f"mhc_allele: {x.epitope.allele}",
        f"cdr3b: {seq}",
        f"cdr3_total_bsa_A2: {polar + apolar:.2f}",
        f"cdr3_polar_bsa_A2: {polar:.2f}",
        f"cdr3_apolar_bsa_A2: {apolar:.2f}",
        f"min_contact_distance_A: {float(rng.uniform(2.4, 4.6)):.2f}",
        f"num_hydrogen_bonds: {int(rng.integers(0, 6))}",
        f"num_salt_bridges: {int(rng.integers(0, 1 + min(3, charged)))}",
        f"contacting_residues: {n_contact}/{len(seq) + int(rng.integers(4, 9))}",
        "contact_rows:",
    ]
    bsa = rng.uniform(5.0, 70.0, size=n_contact)
    for r, area in zip(residues.tolist(), bsa.tolist(), strict=True):
        p = int(rng.integers(0, len(pep)))
        lines.append(
            f"  cdr3b={seq[r]}{start + r} peptide={pep[p]}{p + 1} "
            f"distance_A={float(rng.uniform(2.5, 4.0)):.2f} bsa_A2={area:.2f}"
        )
    lines.append("per_residue_sasa:")
    free = rng.uniform(20.0, 190.0, size=len(seq))
    buried = free * rng.uniform(0.0, 0.6, size=len(seq))
    for i, a in enumerate(seq):
        lines.append(
            f"  res={a}{start + i} sasa_free_A2={free[i]:.1f} "
            f"sasa_complex_A2={free[i] - buried[i]:.1f} rel_buried={buried[i] / free[i]:.2f}"
        )
    top = np.argsort(-bsa)[:3]
    lines.append(
        "hotspots: "
        + ", ".join(f"{seq[residues[t]]}{start + residues[t]} ({bsa[t]:.2f})" for t in top)
    )
    engaged = n_contact / len(seq)
    tag = "STRONG" if engaged > 0.5 else "PARTIAL" if engaged > 0.2 else "WEAK"
    lines += [
        "STRUCTURE_INTERFACE_SIGNAL:",
        f"{tag}_CDR3_PMHC_ENGAGEMENT",
        _footer("interface_analysis"),
    ]
    return "\n".join(lines)


_RENDERERS: dict[str, Callable[[ToolInputs, np.random.Generator, np.ndarray, int], str]] = {
    "cdr3b_biophysics": _biophysics,
    "mcpas_retrieval": _mcpas,
    "thermompnn_ddg": _thermompnn,
    "stability_summary": _stability,
    "interface_analysis": _interface,
}


def render_tools(x: ToolInputs, rng: np.random.Generator) -> list[tuple[str, str]]:
    """The five ``(tool name, serialized result)`` pairs in the fixed order.

    Tools 3 and 4 share one per-position ddG matrix (Tool 4 summarizes Tool 3), drawn
    here from label-independent distributions.
    """
    n = len(x.cdr3b)
    start = int(rng.integers(92, 108))
    sensitivity = rng.gamma(2.0, 0.25, size=(n, 1))
    ddg = np.maximum(
        0.0, sensitivity * rng.exponential(1.6, size=(n, 19)) + rng.normal(0, 0.15, (n, 19))
    )
    return [(name, _RENDERERS[name](x, rng, ddg, start)) for name in TCR_TOOLS]

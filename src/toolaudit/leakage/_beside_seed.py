"""The seed's Table 1, its per-cluster table, Table 6 and Appendix E beside a run on the
controlled benchmark (``toolaudit datasets make tcr-shortcut``).

The report adds these tables only when the scopes are the benchmark's (the full trace and
its five tools); on any other data there is no published figure to compare with.
"""

from __future__ import annotations

from typing import Any

from toolaudit.datasets import SEED_FIGURES, TCR_TOOLS, looks_like_tcr_scopes
from toolaudit.report import Section

_FEATURES = ("word_1_2", "char_wb_2_5", "char_wb_3_5")
#: The seed's carrier: Tool 3, whose file name holds the PDB id.
_CARRIER = TCR_TOOLS[2]


def _num(x: Any) -> str:
    return "—" if x is None else f"{x:.3f}"


def _seed_num(x: float | None) -> str:
    return "—" if x is None else f"{x:.4f}"


def _seed_ci(row: tuple[float, float, float] | None) -> str:
    return "—" if row is None else f"[{row[1]:.4f}, {row[2]:.4f}]"


def _pair(run: Any, seed: float | None) -> str:
    """``run / seed`` in one cell, so each comparison reads along one row: this run's
    figure as the tables above print it, the seed's as published (four decimals)."""
    return f"{_num(run)} / {'—' if seed is None else f'{seed:.4f}'}"


def _ci(lo: Any, hi: Any) -> str:
    return "—" if lo is None or hi is None else f"[{lo:.3f}, {hi:.3f}]"


def seed_blocks(sec: Section, payload: dict[str, Any]) -> None:
    """Append the seed's published leakage figures beside this run's, when the run is on
    the controlled benchmark."""
    scopes = list(dict.fromkeys(r["scope"] for r in payload["scopes"]))
    if not looks_like_tcr_scopes(scopes):
        return
    seed = SEED_FIGURES
    index = {(r["scope"], r["features"]): r for r in payload["scopes"]}
    data = payload.get("data") or {}
    sec.text(
        f"**Beside the seed** ({seed.source}). The seed's figures come from real TCR-pMHC "
        "data and a fine-tuned Qwen3-4B; the controlled benchmark mirrors its layout (fit "
        "on C0, evaluate on C1-C5, five tool sections, an identifier shortcut in the third) "
        "with a planted shortcut, so the tables compare the pattern (which scope stands "
        "out, how dilution and prefixes behave), not the values. This run: "
        f"{data.get('examples', '?')} examples. Each cell: this run / the seed."
    )
    sec.table(
        "Scope AUROC beside the seed's Table 1 (this run / seed)",
        ["scope", "word 1-2", "char_wb 2-5", "char_wb 3-5"],
        [
            [
                s,
                *[
                    _pair((index.get((s, f)) or {}).get("auroc"), seed.scope_auroc[s][f])
                    for f in _FEATURES
                ],
            ]
            for s in scopes
        ],
    )
    groups = seed.clusters
    if ("full", "char_wb_3_5") in index:
        sec.table(
            "Scope AUROC per cluster, char_wb 3-5, beside the seed's Appendix C (this run / seed)",
            ["scope", "all", *groups],
            [
                [
                    s,
                    _pair(index[(s, "char_wb_3_5")]["auroc"], seed.scope_by_group[s][0]),
                    *[
                        _pair(
                            index[(s, "char_wb_3_5")]["by_group"].get(g, {}).get("auroc"),
                            seed.scope_by_group[s][1 + i],
                        )
                        for i, g in enumerate(groups)
                    ],
                ]
                for s in scopes
                if (s, "char_wb_3_5") in index
            ],
        )
    pl = payload.get("prefix_lookup") or {}
    if pl.get("rows"):
        sec.table(
            f"Prefix lookup ({pl.get('class')}) beside the seed's Table 6 (this run / seed; "
            "the seed's lookup is on the digits of the PDB id in thermompnn_ddg's file name"
            + ("" if str(pl.get("class", "")).startswith(_CARRIER) else ", another class")
            + ")",
            ["prefix", "all", *groups],
            [
                [
                    f"{r['chars']} char",
                    _pair(r["auroc"], (seed.prefix.get(r["chars"]) or (None,))[0]),
                    *[
                        _pair(
                            r["by_group"].get(g, {}).get("auroc"),
                            seed.prefix[r["chars"]][1 + i] if r["chars"] in seed.prefix else None,
                        )
                        for i, g in enumerate(groups)
                    ],
                ]
                for r in pl["rows"]
            ],
        )
    _agreement(sec, index, scopes, pl, groups)
    dil = payload.get("dilution") or {}
    if dil.get("real"):
        sec.table(
            f"Real-tool subset sweep ({dil.get('features')}) beside the seed's Appendix E "
            f"(the seed's carrier is {_CARRIER}, then tools 1, 2, 4, 5"
            + ("" if dil.get("carrier") == _CARRIER else f"; this run's is {dil.get('carrier')}")
            + ")",
            ["tools", "|S|", "this run", "95% CI", "seed", "seed 95% CI"],
            [
                [
                    "{" + ", ".join(p["tools"]) + "}",
                    p["size"],
                    _num(p["auroc"]),
                    _ci(*p["ci95"]),
                    _seed_num((seed.real_sweep.get(p["size"]) or (None,))[0]),
                    _seed_ci(seed.real_sweep.get(p["size"])),
                ]
                for p in dil["real"]
            ],
        )
    points = (dil.get("synthetic") or {}).get("points") or []
    if points:
        sec.table(
            "Label-independent synthetic additions beside the seed's Appendix E "
            "(mean over seeds, sd in brackets)",
            ["K", "this run", "seed"],
            [
                [
                    p["k"],
                    f"{_num(p['mean'])} ({_num(p['sd'])})",
                    (
                        f"{seed.synthetic[p['k']][0]:.4f} ({seed.synthetic[p['k']][1]:.4f})"
                        if p["k"] in seed.synthetic
                        else "—"
                    ),
                ]
                for p in points
            ],
        )


def _inside(cell: dict[str, Any] | None, value: float | None) -> bool | None:
    """Whether ``value`` lies in the cell's 95% interval (None: nothing to compare)."""
    ci = (cell or {}).get("ci95")
    if value is None or not ci or ci[0] is None or ci[1] is None:
        return None
    return bool(ci[0] <= value <= ci[1])


def _agreement(
    sec: Section,
    index: dict[tuple[str, str], dict[str, Any]],
    scopes: list[str],
    pl: dict[str, Any],
    groups: tuple[str, ...],
) -> None:
    """How many of the seed's per-cluster values fall inside this run's 95% intervals,
    per cluster: Appendix C (char 3-5, every scope) and Table 6 (every prefix length)."""
    seed = SEED_FIGURES
    tables: list[tuple[str, list[list[bool | None]]]] = []
    if ("full", "char_wb_3_5") in index:
        rows = []
        for s in scopes:
            r = index.get((s, "char_wb_3_5"))
            if r is None:
                continue
            rows.append([_inside(r, seed.scope_by_group[s][0]),
                         *[_inside(r["by_group"].get(g), seed.scope_by_group[s][1 + i])
                           for i, g in enumerate(groups)]])  # fmt: skip
        tables.append(("Appendix C (char_wb 3-5, each scope)", rows))
    if pl.get("rows"):
        rows = [
            [_inside(r, seed.prefix[r["chars"]][0]),
             *[_inside(r["by_group"].get(g), seed.prefix[r["chars"]][1 + i])
               for i, g in enumerate(groups)]]
            for r in pl["rows"]
            if r["chars"] in seed.prefix
        ]  # fmt: skip
        tables.append(("Table 6 (each prefix length)", rows))
    if not tables:
        return

    def count(rows: list[list[bool | None]], j: int) -> str:
        known = [row[j] for row in rows if row[j] is not None]
        return f"{sum(bool(x) for x in known)} of {len(known)}"

    body = []
    for name, rows in tables:
        total = [x for row in rows for x in row[1:] if x is not None]
        body.append([name, *[count(rows, j) for j in range(1 + len(groups))],
                     f"{sum(bool(x) for x in total)} of {len(total)}"])  # fmt: skip
    sec.table(
        "The seed's values inside this run's 95% intervals, per cluster (a planted "
        "benchmark that models the seed's pattern puts them inside; one that does not, "
        "outside)",
        ["seed table", "all", *groups, "C1-C5"],
        body,
    )

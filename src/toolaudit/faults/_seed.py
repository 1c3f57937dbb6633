"""The seed's published counts (Qwen3-8B, 53 retail tasks) beside a run's own, so every
report shows both. These are the paper's reported numbers, used only as the reference
column; nothing is concluded from them alone.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

SEED_MODEL = "Qwen3-8B (bf16), 53 of 114 retail tasks"
#: Our arm name -> the seed's label.
LABELS = {"failed": "F", "falsified_status": "N_s", "falsified_payment": "N_m"}
#: Table I, site block: n, dS0>0, dG>0, headroom n, H<0.01 (headroom), action changes.
SITE = {
    "failed": (53, 53, 45, 22, 15, 15),
    "falsified_status": (46, 25, 26, 20, 8, 6),
    "falsified_payment": (37, 18, 30, 16, 2, 0),
}
#: Table I, along the trajectory: (dG>0, n) per k; sum dA per k; net sgn d pi(V) per k.
ALONG = {
    "failed": ([(45, 53), (51, 51), (32, 41), (14, 19)], [2, -6, -11, 1], [32, 13, 12, 2]),
    "falsified_status": ([(26, 46), (22, 45), (19, 39), (12, 19)], [0, -1, -9, 1], [3, -2, 1, -1]),
    "falsified_payment": ([(30, 37), (18, 37), (22, 33), (6, 17)], [0, 1, 1, 1], [13, 6, 0, 1]),
}
#: The grouping table: (n, dG>0).
GROUPS = {
    ("falsified_payment_by_prefix", "in_prefix"): (31, 30),
    ("falsified_payment_by_prefix", "not_in_prefix"): (6, 0),
    ("falsified_status_by_policy", "policy_mediated"): (14, 6),
    ("falsified_status_by_policy", "not_policy_mediated"): (8, 4),
}
#: Clean rows: n, G < 0, median entropy, below 0.01, agreement at k = 0..3.
CLEAN = {
    "n": 53,
    "g_negative": 53,
    "entropy_median": 0.005,
    "below_floor": 31,
    "agreement": [0.62, 0.55, 0.66, 0.47],
}


def _cell(summary: dict[str, Any], arm: str, k: int) -> dict[str, Any] | None:
    return next((c for c in summary["cells"] if c["arm"] == arm and c["k"] == k), None)


def site_comparison(summary: dict[str, Any]) -> tuple[list[str], list[list[Any]]]:
    """Table I at the site, ours | seed, per arm."""
    header = [
        "arm", "n", "dS0>0", "dG>0", "headroom n", "H<0.01", "action changes",
    ]  # fmt: skip
    rows = []
    for arm, seed in SITE.items():
        c = _cell(summary, arm, 0)
        ours = (
            (c["n"], c["n_ds0_pos"], c["n_dg_pos"], c["headroom_n"], c["headroom_h_below"],
             c["headroom_leader_changes"])
            if c else (None,) * 6
        )  # fmt: skip
        rows.append(
            [f"{LABELS[arm]} ({arm})"] + [f"{_v(o)} | {s}" for o, s in zip(ours, seed, strict=True)]
        )
    return header, rows


def along_comparison(summary: dict[str, Any]) -> tuple[list[str], list[list[Any]]]:
    """Table I along the trajectory (k = 0..3), ours | seed, per arm and quantity."""
    header = ["arm", "quantity", "k=0", "k=1", "k=2", "k=3"]
    rows = []
    for arm, (dg, da, dv) in ALONG.items():
        blocks: list[tuple[str, list[str], Callable[[dict[str, Any]], str]]] = [
            ("dG>0", [f"{a}/{b}" for a, b in dg], lambda c: f"{c['n_dg_pos']}/{c['n']}"),
            ("sum dA", [f"{x:+d}" for x in da], lambda c: f"{c['net_dagree']:+d}"),
            ("net sgn dpi(V)", [f"{x:+d}" for x in dv], lambda c: f"{c['net_sgn_dp_reread']:+d}"),
        ]
        for name, seed_vals, fmt_ours in blocks:
            cells = []
            for k in range(4):
                c = _cell(summary, arm, k)
                cells.append(f"{fmt_ours(c) if c else '—'} | {seed_vals[k]}")
            rows.append([LABELS[arm], name, *cells])
    return header, rows


def group_comparison(summary: dict[str, Any]) -> tuple[list[str], list[list[Any]]]:
    """The inconsistent-family groupings, ours | seed: n and dG>0."""
    header = ["arm", "group", "n", "dG>0"]
    rows = []
    for (key, group), (n, up) in GROUPS.items():
        g = summary.get(key, {}).get(group, {"n": 0, "n_dg_pos": 0})
        arm = "N_m" if key.startswith("falsified_payment") else "N_s"
        rows.append([arm, group, f"{g['n']} | {n}", f"{g['n_dg_pos']} | {up}"])
    return header, rows


def _v(x: Any) -> str:
    return "—" if x is None else str(x)

"""The seed's claims, each judged on this run: does it reproduce, contradict, or can it
not be judged at this size?

Two kinds of claim, two rules (``ALPHA`` = 0.05):

* **A direction** the seed reports with a significant sign test (the failed arm raises
  S0, raises G and raises the re-read mass pi(V); a payment id swapped where the true
  id is in the prefix raises G). This run's own sign test decides: ``reproduces`` when
  it is significant in the seed's direction, ``contradicts`` when significant the other
  way, ``cannot_judge`` otherwise (too few rows, or no consistent shift).
* **A count** the seed reports (the swapped payment id without the true id in the
  prefix raises G on 0 of 6; the status swap raises G on about half; clean entropy is
  below the 0.01 floor on 31 of 53; the clean leading action agrees with the reference
  on 0.62 at k = 0). Fisher's exact test of this run's count against the seed's:
  ``contradicts`` when the two proportions differ (p < 0.05), otherwise
  ``not_distinguishable`` (this run cannot tell them apart: not a reproduction, and at a
  small n weak evidence either way).
"""

from __future__ import annotations

import math
from typing import Any

from scipy.stats import fisher_exact

from toolaudit.faults._seed import CLEAN, GROUPS, SITE
from toolaudit.report import Finding

ALPHA = 0.05


def _cell(summary: dict[str, Any], arm: str) -> dict[str, Any] | None:
    return next((c for c in summary["cells"] if c["arm"] == arm and c["k"] == 0), None)


def _direction(
    name: str, claim: str, n_pos: int, n_neg: int, p: float | None, *, seed: str
) -> Finding:
    n = n_pos + n_neg
    if p is None or math.isnan(p) or p >= ALPHA or n_pos == n_neg:
        verdict = "cannot_judge"
    else:
        verdict = "reproduces" if n_pos > n_neg else "contradicts"
    return Finding(
        name=f"faults.seed.{name}",
        verdict=verdict,
        value=float(n_pos),
        test="sign test of this run's paired differences",
        p_value=None if p is None or math.isnan(p) else p,
        n=n,
        subject=claim,
        details={"kind": "direction", "n_up": n_pos, "n_down": n_neg, "seed": seed},
    )


def _count(name: str, claim: str, ours: tuple[int, int], seed: tuple[int, int]) -> Finding:
    k, n = ours
    ks, ns = seed
    if n == 0:
        verdict, p = "cannot_judge", None
    else:
        p = float(fisher_exact([[k, n - k], [ks, ns - ks]])[1])
        verdict = "contradicts" if p < ALPHA else "not_distinguishable"
    return Finding(
        name=f"faults.seed.{name}",
        verdict=verdict,
        value=float(k),
        test="Fisher's exact test, this run's count against the seed's",
        p_value=p,
        n=n,
        subject=claim,
        details={"kind": "count", "seed": f"{ks}/{ns}", "ours": f"{k}/{n}"},
    )


def seed_claims(summary: dict[str, Any]) -> list[Finding]:
    """One finding per seed claim, in the seed's order (a claim with no rows is
    ``cannot_judge`` with n = 0)."""
    f = _cell(summary, "failed") or {}
    n_f, s0_up, dg_up = SITE["failed"][:3]
    out = [
        _direction("failed_s0", "F raises S0 at the site", int(f.get("n_ds0_pos", 0)),
                   int(f.get("n_ds0_differs", 0)) - int(f.get("n_ds0_pos", 0)),
                   f.get("p_sign_ds0"), seed=f"{s0_up}/{n_f} up"),
        _direction("failed_g", "F raises G at the site", int(f.get("n_dg_pos", 0)),
                   int(f.get("n_dg_neg", 0)), f.get("p_sign_dg"), seed=f"{dg_up}/{n_f} up"),
        _direction("failed_reread", "F raises the re-read mass pi(V) at the site",
                   int(f.get("n_dp_reread_pos", 0)), int(f.get("n_dp_reread_neg", 0)),
                   f.get("p_sign_dp_reread"), seed="net sign +32 of 53"),
    ]  # fmt: skip
    by_prefix = summary.get("falsified_payment_by_prefix", {})
    key = "falsified_payment_by_prefix"
    g = by_prefix.get("in_prefix", {})
    n_seed, up_seed = GROUPS[(key, "in_prefix")]
    out.append(_direction(
        "payment_in_prefix_g", "N_m raises G where the true payment id is in the prefix",
        int(g.get("n_dg_pos", 0)), int(g.get("n", 0)) - int(g.get("n_dg_pos", 0)),
        g.get("p_sign_dg"), seed=f"{up_seed}/{n_seed} up"))  # fmt: skip
    g = by_prefix.get("not_in_prefix", {})
    n_seed, up_seed = GROUPS[(key, "not_in_prefix")]
    out.append(_count(
        "payment_not_in_prefix_g", "N_m raises G where the true payment id is not in the prefix",
        (int(g.get("n_dg_pos", 0)), int(g.get("n", 0))), (up_seed, n_seed)))  # fmt: skip
    st = _cell(summary, "falsified_status") or {}
    n_s, _, up_s = SITE["falsified_status"][:3]
    out.append(_count("status_g", "N_s raises G on about half the tasks (roughly flat)",
                      (int(st.get("n_dg_pos", 0)), int(st.get("n", 0))), (up_s, n_s)))  # fmt: skip
    clean = summary.get("clean", {})
    n_c = int(clean.get("n", 0))
    seed_n, seed_below, seed_agree = CLEAN["n"], CLEAN["below_floor"], CLEAN["agreement"]
    assert isinstance(seed_n, int) and isinstance(seed_below, int)
    assert isinstance(seed_agree, list)
    out.append(_count("clean_entropy_floor", "clean entropy below 0.01 nats on most tasks",
                      (int(clean.get("n_entropy_below_headroom", 0)), n_c),
                      (seed_below, seed_n)))  # fmt: skip
    rate = (clean.get("agreement_by_k") or {}).get("0")
    agree = round(rate * n_c) if isinstance(rate, float) and not math.isnan(rate) else None
    out.append(_count(
        "clean_agreement_k0", "the clean leading action agrees with the reference at k = 0",
        (agree or 0, n_c if agree is not None else 0),
        (round(seed_agree[0] * seed_n), seed_n)))  # fmt: skip
    return out


def claim_sentence(f: Finding) -> str:
    """The report sentence of a seed-claim finding."""
    p = "n/a" if f.p_value is None else f"{f.p_value:.3g}"
    if f.details.get("kind") == "direction":
        ours = f"{f.details['n_up']} up, {f.details['n_down']} down"
    else:
        ours = str(f.details.get("ours"))
    return (
        f"Seed claim '{f.subject}' ({f.details['seed']} in the seed): {f.verdict.replace('_', ' ')} "
        f"on this run ({ours}; {f.test} p = {p})."
    )

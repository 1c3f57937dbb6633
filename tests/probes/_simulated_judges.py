"""TEST FIXTURE ONLY: seeded simulated judges, for exercising the judge audit's arithmetic.

Never used by the library or the CLI (a study's judge audit runs real judges through
``toolaudit.models`` or reads a verdicts file). The "outcome" judge passes runs whose
report has true quality ≥ 0.5; the "procedure" judge passes runs that checked, loaded,
analysed and named their method; each verdict flips with probability ``noise``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

from toolaudit.probes import Run, VerdictRecord


def _unit(*parts: object) -> float:
    digest = hashlib.sha256("|".join(map(str, parts)).encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def _procedure_ok(run: Run) -> bool:
    ops = [a.split("(", 1)[0] for a in run.actions]
    return all(op in ops for op in ("check_constraints", "load_dataset", "run_analysis")) and any(
        '"method"' in a for a in run.actions if a.startswith("submit_report")
    )


def simulate_verdicts(
    runs: Sequence[Run],
    *,
    views: Sequence[str] = ("original", "tool_rename", "reformat"),
    n_repeats: int = 3,
    noise: float = 0.04,
    seed: int = 0,
) -> list[VerdictRecord]:
    """Seeded simulated judges over the original runs of seed label 0.

    ``outcome_judge`` passes runs whose report has true quality ≥ 0.5; ``procedure_judge``
    passes runs that checked, loaded, analysed and named their method in the report. Both
    read the trajectory mapped back to canonical terms, so a view changes nothing but the
    per-call noise (each verdict flips with probability ``noise``, drawn from a hash of
    judge, view, repeat, record and seed).
    """
    records = [r for r in runs if r.condition == "original" and r.seed == 0]
    out = []
    for r in records:
        rid = f"{r.task}/{r.policy}"
        base = {"outcome_judge": r.quality >= 0.5, "procedure_judge": _procedure_ok(r)}
        for judge, ok in base.items():
            for view in views:
                for rep in range(n_repeats):
                    flip = _unit(judge, view, rep, rid, seed) < noise
                    verdict = "pass" if ok != flip else "fail"
                    out.append(
                        VerdictRecord(
                            judge=judge,
                            view=view,
                            repeat=rep,
                            record_id=rid,
                            verdict=verdict,
                            native_reward=1.0 if r.passed else 0.0,
                        )
                    )
    return out

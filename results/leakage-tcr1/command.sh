#!/usr/bin/env bash
# The leakage audit (PT2D) at the seed's size (issue 40, item 3): the controlled TCR
# benchmark at scale 1 (19,276 examples, seed 0, the calibrated strength 1.17; generated
# into build/ when missing: deterministic, 1 GB, not committed), then `toolaudit leakage`
# with every default: fit on C0/train, evaluate on C1-C5, the scope table (full trace and
# five tools x three feature sets, 2,000 bootstrap replicates), provenance and token
# classes, the prefix lookup, the presence control, and the seed's full dilution grid
# (real-tool sweep; synthetic K = 0, 1, 2, 5, 10, 20 x five seeds). The report prints the
# seed's Table 1, its per-cluster table, Table 6 and Appendix E beside this run's.
# About 8 minutes and 3.5 GB on an idle 2-core machine. Rerunning rewrites the same
# leakage.json byte for byte.
set -euo pipefail
cd "$(dirname "$0")/../.."
data=build/tcr-s1-seed0
[ -s "$data/examples.jsonl" ] || .venv/bin/toolaudit -q datasets make tcr-shortcut \
  --out "$data" --scale 1 --seed 0 >/dev/null
.venv/bin/toolaudit leakage "$data/examples.jsonl" --out results/leakage-tcr1 --seed 0 "$@"

#!/usr/bin/env bash
# The leakage audit (PT2D) at the seed's size on the controlled TCR benchmark with the
# seed's per-cluster pattern (issue 55, item 4): as results/leakage-tcr1 (scale 1, 19,276
# examples, seed 0, strength 1.17, every default of `toolaudit leakage`), but generated
# with `--cluster-strength seed`: the shortcut's strength per cluster calibrated to the
# seed's Table 6 (weak in C1 and C3, none in C5) instead of nearly uniform. The report
# prints the seed's Appendix C and Table 6 beside this run's, and counts per cluster how
# many seed values fall inside this run's 95% intervals; compare the same count in
# results/leakage-tcr1. Data generated into build/ when missing (deterministic, 1 GB, not
# committed). About 8 minutes on an idle 2-core machine; rerunning rewrites the same
# leakage.json byte for byte.
set -euo pipefail
cd "$(dirname "$0")/../.."
data=build/tcr-s1-seed0-clusters-seed
[ -s "$data/examples.jsonl" ] || .venv/bin/toolaudit -q datasets make tcr-shortcut \
  --out "$data" --scale 1 --seed 0 --cluster-strength seed >/dev/null
.venv/bin/toolaudit leakage "$data/examples.jsonl" --out results/leakage-tcr1-seedpattern \
  --seed 0 "$@"

#!/usr/bin/env bash
# The faults study at the seed's size on the embedded base model (Gemma 3 270M): all 50
# qualifying tau2 retail tasks, the five arms, k = 0..3, two 1-thread worker processes.
# Resumable: rerun this script from the repository root and it continues from rows.jsonl (a done
# task is never recomputed); commit the folder at least every 30 minutes.
set -euo pipefail
cd "$(dirname "$0")/../.."
OMP_NUM_THREADS=1 exec .venv/bin/toolaudit faults run --out results/faults-gemma-k3 \
  --model embedded:gemma --k-max 3 --tasks 50 --workers 2 --data-root ../shared/data

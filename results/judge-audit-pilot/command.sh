#!/usr/bin/env bash
# Pilot of the seed's judge audit (issue 39, item 5 at pilot size): 8 fixed real tau2
# trajectories (4 retail from gpt-4.1, 4 airline from gpt-4.1; native pass and fail both
# chosen by the stratified, seeded choice) x 4 views (original, repeat, tool_rename,
# reformat) x 3 calls x two judges run by llama.cpp: llama:qwen and llama:gemma.
# Resumable: rerun this script from the repository root; each folder continues from its
# verdicts.jsonl. The shared data has no airline domain folder, so airline records are
# judged without a policy (a recorded fallback).
set -euo pipefail
cd "$(dirname "$0")/../.."
SIMS=../shared/data/tau2/simulations
for part in "retail retail__gpt-4.1__user-gpt-4.1__test40x1.json" \
            "airline airline__gpt-4.1__user-gpt-4.1__test20x1.json"; do
  set -- $part
  OMP_NUM_THREADS=1 .venv/bin/toolaudit probe judge-audit "$SIMS/$2" \
    --judge-model llama:qwen --judge-model llama:gemma --records 4 --repeats 3 \
    --seed 0 --out "results/judge-audit-pilot/$1"
done

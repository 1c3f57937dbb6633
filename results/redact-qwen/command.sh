#!/usr/bin/env bash
# The redaction audit on the embedded instruct model (issue 25): the controlled TCR
# benchmark at scale 0.05 (seed 0; regenerated into build/ when missing: deterministic,
# 50 MB, not committed), 40 label-balanced test rows, prompts shortened to two tools of 8
# lines, scored zero-shot as a chat turn by embedded:qwen (options scoring: the ten
# answers' log-probabilities). Resumable: the response cache (cache.sqlite) is committed
# with the results, so a rerun of this script makes no new model calls.
set -euo pipefail
cd "$(dirname "$0")/../.."
data=build/tcr-s0.05-seed0
[ -s "$data/examples.jsonl" ] || .venv/bin/toolaudit -q datasets make tcr-shortcut \
  --out "$data" --scale 0.05 --seed 0 >/dev/null
OMP_NUM_THREADS=2 exec .venv/bin/toolaudit redact "$data" --out results/redact-qwen \
  --model embedded:qwen --chat --limit 40 --seed 0 \
  --keep-tools thermompnn_ddg,interface_analysis --max-tool-lines 8

#!/usr/bin/env bash
# The redaction audit's frozen-model re-evaluation as generation on the embedded instruct
# model (issue 25): the controlled TCR benchmark at scale 0.2 (seed 0; regenerated into
# build/ when missing: deterministic, 200 MB, not committed), 200 label-balanced test rows
# (all 53 positives), prompts shortened to two tools of 8 lines, each a chat turn, and the
# model's greedy reply parsed for <answer>k</answer> (at most 24 new tokens). Resumable:
# the response cache (cache.sqlite) is committed with the results, so a rerun of this
# script continues where it stopped and, once complete, makes no new model calls.
set -euo pipefail
cd "$(dirname "$0")/../.."
data=build/tcr-s0.2-seed0
[ -s "$data/examples.jsonl" ] || .venv/bin/toolaudit -q datasets make tcr-shortcut \
  --out "$data" --scale 0.2 --seed 0 >/dev/null
OMP_NUM_THREADS=2 exec .venv/bin/toolaudit redact "$data" --out results/redact-qwen-generate \
  --model embedded:qwen --chat --scoring generate --limit 200 --seed 0 \
  --keep-tools thermompnn_ddg,interface_analysis --max-tool-lines 8

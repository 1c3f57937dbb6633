#!/usr/bin/env bash
# The probe LLM-agent study at the seed's size: 25 tasks x 7 conditions x 3 seed labels
# (525 runs) with the embedded Qwen2.5-Coder-0.5B-Instruct run by llama.cpp (llama:qwen)
# as the agent and as a real judge. Runs seed label by seed label; resumable: rerun this
# script from the repository root and it continues from records.jsonl. Commit the folder
# at least every 30 minutes.
# The judge grades under the content cuts with the study prompt (--judge-views
# full,final_answer,procedure --judge-prompt study: its settings when it ran; the default is
# now the seed's protocol). Its verdicts were drawn before the seeding fix of issue 54: one
# sampling seed per repeat index, shared by every record; a fresh run draws a seed per
# (judge, record, view, call).
set -euo pipefail
cd "$(dirname "$0")/../.."
OMP_NUM_THREADS=1 exec .venv/bin/toolaudit probe run --suite researchops --policies llm \
  --model llama:qwen --judge-model llama:qwen \
  --judge-views full,final_answer,procedure --judge-prompt study --tasks 25 --seeds 3 --n-jobs 1 \
  --out results/probe-llm --report

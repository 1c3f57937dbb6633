#!/usr/bin/env bash
# The seed's judge audit with judges that differ (issue 54): the same 40 fixed real tau2
# trajectories and four views as results/judge-audit (retail: gpt-4.1 and the fine-tuned
# ft-gpt-4.1-sft; airline: gpt-4.1 and qwen2.5-7b; 10 from each, chosen by the seeded,
# stratified choice), 3 calls per view, two judges of two sizes, both run by llama.cpp with
# 2 threads and sampled at the audit's temperature 0.7:
#   Qwen2.5-Coder-1.5B-Instruct (Q4_K_M) and Qwen2.5-Coder-0.5B-Instruct.
# SmolLM2-135M-Instruct was the third judge and was dropped (smollm2-dropped/README.md: 22
# of the 120 payloads exceed its 8,192-token window, and its trial replies gave no verdict).
# The judge is asked for a one-sentence reason first, then the verdict (--prompt
# reason-first, up to 128 tokens); each call's seed depends on the record, the view, the
# judge and the call index. Prompts average about 5,800 tokens (the retail policy alone is
# about 1,500), so the study runs for hours on 2 cores: calls go record by record (every
# judge, every view), so a stopped run holds whole records, and `bash command.sh
# --partial` analyses them into partial/ without asking a judge.
# Resumable: rerun this script from the repository root; it continues from verdicts.jsonl.
set -euo pipefail
cd "$(dirname "$0")/../.."
SIMS=../shared/data/tau2/simulations
.venv/bin/toolaudit probe judge-audit \
  "$SIMS/retail__gpt-4.1__user-gpt-4.1__test40x1.json" \
  "$SIMS/retail__ft-gpt-4.1-sft__user-gpt-4.1__test40x1.json" \
  "$SIMS/airline__gpt-4.1__user-gpt-4.1__test20x1.json" \
  "$SIMS/airline__qwen2.5-7b__user-gpt-4.1__50x1.json" \
  --judge-model llama:qwen1.5b,threads=2 --judge-model llama:qwen,threads=2 \
  --prompt reason-first --max-tokens 128 \
  --records 40 --repeats 3 --seed 0 --out results/judge-judges "$@"

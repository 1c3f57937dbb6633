#!/usr/bin/env bash
# TRACE on tau2-bench retail (inspect_evals' Inspect-native tau2) with the embedded Qwen2.5-Coder
# 0.5B as agent and user simulator, through toolaudit's Inspect model provider (llama.cpp: the
# same GGUF weights as embedded:qwen, about 5x faster decoding on the CPU). Resumes: rerun it.
# The agent samples at 0.7 with a per-run seed (tau2 fixes 0.0; sampling lets identical reruns
# differ, which the repeat control needs); inert is the no-op baseline (scripted, no model).
set -euo pipefail
cd "$(dirname "$0")/../.."
toolaudit probe run --harness inspect --task inspect_evals/tau2_retail \
  --model llama:qwen --policies llm,inert \
  --conditions original,tool_rename,reformat,misleading_names,repeat \
  --limit 10 --epochs 1 --max-turns 6 --temperature 0.7 --time-limit 600 \
  --out results/probe-tau2-qwen --report

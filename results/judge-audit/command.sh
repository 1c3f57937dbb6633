#!/usr/bin/env bash
# The seed's judge audit (issue 39, item 5): 40 fixed real tau2 trajectories from four
# agents' runs in ../shared/data (retail: gpt-4.1 and the fine-tuned ft-gpt-4.1-sft;
# airline: gpt-4.1 and qwen2.5-7b), 10 from each, native pass and fail both chosen by
# the seeded, stratified choice, x 4 views (original, repeat, tool_rename, reformat) x 3
# calls x two judges: Qwen2.5-Coder-0.5B-Instruct run by llama.cpp with 2 threads at two
# settings, sampled at the audit's temperature 0.7 and greedy (temperature=0), sharing
# one loaded model. Gemma 3 270M (base) was the second judge first; it cannot follow the
# prompt (none of its 132 calls on 11 records opened with a verdict: 88 echo the
# instruction, 44 write other text), so the issue's alternative was taken: its verdicts
# are kept in gemma-dropped/. The judge reads the domain policy
# (retail: the shared domain folder; airline: the policy inspect_evals 0.26.0 ships, as
# the shared data has no airline domain folder: a recorded stand-in), the task criteria,
# the tools and the trajectory; never the agent or the native reward.
# The seeding fix (issue 54): the sampled judge's calls were first drawn with one seed per
# (view, call index), shared by every record; they are kept with their analysis in
# seeding-defect/, and the sampled judge was judged again with a seed per (record, view,
# judge, call). The greedy judge's 480 verdicts do not depend on the seed and are kept.
# The prompt is the one this study was first run with (--prompt verdict-first).
# Resumable: rerun this script from the repository root; it continues from verdicts.jsonl.
# Arguments are passed on: `bash command.sh --partial` analyses the whole records so far
# into partial/ without asking a judge (results/render.sh does it).
set -euo pipefail
cd "$(dirname "$0")/../.."
SIMS=../shared/data/tau2/simulations
.venv/bin/toolaudit probe judge-audit \
  "$SIMS/retail__gpt-4.1__user-gpt-4.1__test40x1.json" \
  "$SIMS/retail__ft-gpt-4.1-sft__user-gpt-4.1__test40x1.json" \
  "$SIMS/airline__gpt-4.1__user-gpt-4.1__test20x1.json" \
  "$SIMS/airline__qwen2.5-7b__user-gpt-4.1__50x1.json" \
  --judge-model llama:qwen,threads=2 --judge-model llama:qwen,threads=2,temperature=0 \
  --prompt verdict-first --max-tokens 64 \
  --records 40 --repeats 3 --seed 0 --out results/judge-audit "$@"

#!/usr/bin/env bash
# Render the tables of the committed studies from the rows written so far, without
# touching the running studies' files: each folder is analysed in a copy, and the
# rendered report (report.md, with the run's counts: tasks or runs done) is copied back
# as partial-report.md next to the rows. Run from the repository root before a commit.
set -euo pipefail
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if [ -s results/faults-qwen-k3/rows.jsonl ]; then
  cp -r results/faults-qwen-k3 "$tmp/fq"
  .venv/bin/toolaudit -q faults analyze "$tmp/fq" >/dev/null
  cp "$tmp/fq/report.md" results/faults-qwen-k3/partial-report.md
fi
if [ -s results/probe-llm/records.jsonl ]; then
  cp -r results/probe-llm "$tmp/pl"
  .venv/bin/toolaudit -q probe analyze "$tmp/pl" --report >/dev/null
  cp "$tmp/pl/report.md" results/probe-llm/partial-report.md
fi

#!/usr/bin/env bash
# Render the tables of the committed studies from the rows written so far, without
# touching the running studies' files: each folder is analysed in a copy, and the
# rendered report (report.md, with the run's counts: tasks or runs done) is copied back
# as partial-report.md next to the rows. Run from the repository root before a commit.
set -euo pipefail
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# A study that finished has its own report.md (written by the run); only unfinished ones
# are rendered here.
for dir in results/faults-*/; do
  dir=${dir%/}
  if [ -s "$dir/rows.jsonl" ] && [ ! -e "$dir/report.md" ]; then
    cp -r "$dir" "$tmp/f"
    .venv/bin/toolaudit -q faults analyze "$tmp/f" >/dev/null
    cp "$tmp/f/report.md" "$dir/partial-report.md"
    rm -rf "$tmp/f"
  fi
done
if [ -s results/probe-llm/records.jsonl ] && [ ! -e results/probe-llm/report.md ]; then
  cp -r results/probe-llm "$tmp/pl"
  .venv/bin/toolaudit -q probe analyze "$tmp/pl" --report >/dev/null
  cp "$tmp/pl/report.md" results/probe-llm/partial-report.md
fi
if [ -s results/judge-audit/verdicts.jsonl ] && [ ! -e results/judge-audit/judge_audit.json ]; then
  # reads the verdicts so far (a line being written is left out), writes only partial/
  bash results/judge-audit/command.sh --partial -q >/dev/null 2>"$tmp/ja.err" \
    || echo "judge-audit: $(tail -1 "$tmp/ja.err")" >&2
fi

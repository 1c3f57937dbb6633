#!/usr/bin/env bash
# The redaction audit on the scikit-learn stand-in (issue 40, item 3): the controlled TCR
# benchmark at scale 0.2 (3,855 examples, seed 0, strength 1.17; generated into build/
# when missing: deterministic, not committed), the controlled frozen model
# (`models train-controlled`: char_wb 3-5 TF-IDF + L1 logistic regression fitted on
# C0/train's full prompts; 5.6 MB, so not committed: retraining is deterministic and is
# checked against the committed frozen.joblib.sha256), then
# `toolaudit redact` on the test split (C1-C5, 980 rows) with the benchmark's default
# classes (pdb_id, the peptide control, format), options scoring. The report prints the
# seed's Tables 7 and 8 beside this run's. About 2 minutes on 2 cores (the response cache
# is not committed either: the model answers 3,920 rows in about a minute).
set -euo pipefail
cd "$(dirname "$0")/../.."
out=results/redact-sklearn
data=build/tcr-s0.2-seed0
[ -s "$data/examples.jsonl" ] || .venv/bin/toolaudit -q datasets make tcr-shortcut \
  --out "$data" --scale 0.2 --seed 0 >/dev/null
[ -s "$out/frozen.joblib" ] || .venv/bin/toolaudit models train-controlled "$data" \
  --out "$out/frozen.joblib" --seed 0
sha256sum -c "$out/frozen.joblib.sha256"
.venv/bin/toolaudit redact "$data" --out "$out/redaction" --model "sklearn:$out/frozen.joblib" \
  --seed 0 "$@"

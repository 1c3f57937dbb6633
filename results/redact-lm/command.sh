#!/usr/bin/env bash
# Redaction's frozen-model test on a language model that learned the shortcut (issue 40):
# the seed's Table 8 protocol on a small causal LM trained here, from scratch, on CPU.
#  1. the controlled TCR benchmark at scale 0.05 with the planted id shortcut at strength 8
#     (seed 0; regenerated into build/ when missing: deterministic, not committed);
#  2. `models train-controlled --kind lm --size mini` (a 2-layer Llama, 64 wide, BPE 1,024
#     fitted on the fit split): SFT on C0/train's prompts (all five tool sections, each cut
#     to its first 3 lines), label-balanced replacement sampling, target <answer>k</answer>;
#     1,500 steps of 16, one torch thread (deterministic); the folder is committed (0.8 MB);
#  3. the same LM trained on prompts without the tool trace: the seed's no-evidence baseline;
#  4. `redact` on the test split (C1-C5) through the generation-and-parse path a user's
#     fine-tuned model takes: original, pdb_id, peptide and format redaction (the
#     benchmark's default classes), the prompts cut as in training.
# Rerunning reproduces the committed files; each step is skipped when its output exists
# (so a plain rerun answers from the committed weights and cache: it re-proves the scoring,
# not the training). `bash command.sh --retrain DIR` trains both models again into the fresh
# folder DIR with the same options, redacts with them, and compares with the committed
# study: the weights' SHA-256 and each variant's AUROC (training is byte-identical only on
# a CPU with the same instruction sets: training.json records the machine).
set -euo pipefail
cd "$(dirname "$0")/../.."
out=results/redact-lm
committed=$out
if [ "${1:-}" = "--retrain" ]; then
  [ -n "${2:-}" ] || { echo "command.sh --retrain DIR: give a fresh folder" >&2; exit 2; }
  [ ! -e "$2" ] || { echo "command.sh --retrain $2: exists; give a fresh folder" >&2; exit 2; }
  out=$2
fi
data=build/tcr-s0.05-str8-seed0
[ -s "$data/examples.jsonl" ] || .venv/bin/toolaudit -q datasets make tcr-shortcut \
  --out "$data" --scale 0.05 --strength 8 --seed 0 >/dev/null
train() {  # $1: folder, then extra options
  local dir=$1; shift
  [ -s "$dir/training.json" ] || .venv/bin/toolaudit models train-controlled "$data" --kind lm \
    --out "$dir" --size mini --steps 1500 --batch-size 16 --lr 3e-3 --max-tool-lines 3 \
    --threads 1 --seed 0 "$@"
}
train "$out/model"
train "$out/model-no-trace" --no-trace
OMP_NUM_THREADS=1 .venv/bin/toolaudit redact "$data" --out "$out/redaction" \
  --model "hf:$out/model" --scoring generate --max-tool-lines 3 --seed 0
if [ "$out" != "$committed" ]; then
  .venv/bin/python - "$committed" "$out" <<'PY'
import hashlib, json, sys
from pathlib import Path
a, b = map(Path, sys.argv[1:3])
for model in ("model", "model-no-trace"):
    ha, hb = (hashlib.sha256((d / model / "model.safetensors").read_bytes()).hexdigest()
              for d in (a, b))
    same = "identical" if ha == hb else "different"
    print(f"{model}: weights {same} (committed {ha[:8]}, retrained {hb[:8]})")
    ma, mb = (json.loads((d / model / "training.json").read_text()).get("machine") for d in (a, b))
    print(f"  trained on {ma or 'an unrecorded machine'} / {mb}")
va, vb = (json.loads((d / "redaction" / "redaction.json").read_text())["variants"] for d in (a, b))
for x, y in zip(va, vb):
    print(f"{x['name']:<10} AUROC committed {x['auroc']:.4f}, retrained {y['auroc']:.4f}")
PY
fi

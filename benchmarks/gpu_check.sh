#!/usr/bin/env bash
# GPU check of the model layer: on a machine with a CUDA GPU, run the scoring benchmark
# (benchmarks/scoring_speed.py) on CUDA with random-init weights of the real shapes
# (Gemma 3 270M, Qwen2.5 0.5B, a Qwen 7B shape), since the real weights cannot travel.
# Each shape runs twice: float32 (layer vs naive must agree within 1e-3) and bfloat16
# (timing only; bf16 rounding differs between the two paths). Prints tokens/s and s/task.
# --dry-run prints the commands instead of running them (no GPU needed; the default
# tests parse them with scoring_speed.py's options).
#
#   bash benchmarks/gpu_check.sh            # needs python3 with torch (CUDA) + transformers
#   PREFIX=3000 ARMS=5 bash benchmarks/gpu_check.sh
#   bash benchmarks/gpu_check.sh --dry-run
set -uo pipefail
DRY_RUN=0
case "${1:-}" in
  "") ;;
  --dry-run) DRY_RUN=1 ;;
  *) echo "usage: bash benchmarks/gpu_check.sh [--dry-run]" >&2; exit 2 ;;
esac
cd "$(dirname "$0")/.."
PY=${PY:-python3}
export PYTHONPATH="$PWD/src${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
PREFIX=${PREFIX:-3000}
ARMS=${ARMS:-5}
if [ "$DRY_RUN" = 0 ]; then
  "$PY" -c "import torch, transformers; assert torch.cuda.is_available(), 'no CUDA device'; \
print('gpu', torch.cuda.get_device_name(0), 'torch', torch.__version__, 'transformers', transformers.__version__)" || exit 2
fi
status=0
for shape in gemma qwen qwen7b; do
  for dtype in float32 bfloat16; do
    tol=0.001; [ "$dtype" = bfloat16 ] && tol=1.0
    cmd=("$PY" benchmarks/scoring_speed.py --random-init "$shape" --device cuda --dtype "$dtype"
         --prefix-tokens "$PREFIX" --arms "$ARMS" --tolerance "$tol")
    if [ "$DRY_RUN" = 1 ]; then
      printf '%q ' "${cmd[@]}"; echo
      continue
    fi
    echo "== $shape $dtype"
    "${cmd[@]}" || status=1
  done
done
exit $status

#!/usr/bin/env bash
# ElasticZO's fine-tuning experiment, small: LeNet-5 trained upright with Full BP (FP32), then
# fine-tuned on a rotated set by each method, FP32 and INT8 (the int8 runs start from the
# quantized FP32 weights), against no fine-tuning. Writes runs/finetune/<DATA>/<run>/ and skips
# finished runs. Usage: scripts/finetune_rotated.sh [DATA] [SEED] [EPOCHS]
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BIN="${ZOTRAIN_BIN:-$ROOT/build/zotrain}"
export ZOTRAIN_DATA="${ZOTRAIN_DATA:-$ROOT/data}"
SRC="${SRC:-mnist}"
DATA="${1:-mnist-rotated:-45..45}"
SEED="${2:-0}"
EPOCHS="${3:-2}"
OUT="$ROOT/runs/finetune/$DATA/s$SEED"
mkdir -p "$OUT"
pre="$OUT/pretrain-$SRC"
[[ -f "$pre/summary.json" ]] ||
  "$BIN" train --data "$SRC" --method bp --lr 0.01 --epochs 3 --seed "$SEED" --out "$pre" > /dev/null
ckpt="$pre/checkpoint.bin"
"$BIN" eval --checkpoint "$ckpt" --data "$DATA" > "$OUT/no-finetune.txt"
run() {
  local name="$1"; shift
  [[ -f "$OUT/$name/summary.json" ]] && return
  "$BIN" train --data "$DATA" --init "$ckpt" --epochs "$EPOCHS" --seed "$SEED" --out "$OUT/$name" "$@" > /dev/null
}
export -f run 2>/dev/null || true
{
  run f32-bp --method bp --lr 0.01 &
  run f32-cls1 --method elastic --zo-layer-scale none --zo-lr 5e-4 --bp-layers 2 &
  wait
  run f32-cls2 --method elastic --zo-layer-scale none --zo-lr 5e-4 --bp-layers 1 &
  run f32-zo --method zo --zo-lr 2e-3 --zo-layer-scale none &
  wait
  run int8-bp --precision int8 --method bp --bp-bits 4 &
  run int8s8-cls1 --precision int8 --method elastic --zo-layer-scale none --bp-layers 2 --int-eps 15 --loss-frac-bits 8 --bp-bits 4 &
  wait
  run int8s8-cls2 --precision int8 --method elastic --zo-layer-scale none --bp-layers 1 --int-eps 15 --loss-frac-bits 8 --bp-bits 4 &
  run int8s8-zo --precision int8 --method zo --int-eps 15 --loss-frac-bits 8 &
  wait
}
for d in "$OUT"/*/; do
  n=$(basename "$d")
  [[ -f "$d/summary.json" ]] && python3 -c "import json,sys; d=json.load(open('$d/summary.json')); print('$n', round(100*d['final_test_acc'],2))"
done
cat "$OUT/no-finetune.txt"

#!/usr/bin/env bash
# Distributed ZO (docs/distributed.md): bytes each rank sends per step, and the training time of
# 2 ranks (one thread each) against 1 rank with 1 and with 2 threads, runs alternated ROUNDS
# times.
#
#   bench/distributed.sh [-r ROUNDS] BUILD_DIR OUT.jsonl
#
# Each line of OUT.jsonl is one run: the case, ranks, threads, the steps' bytes per rank
# (summary.json's bytes_sent_per_step), the parameters (for data-parallel backprop's ring
# all-reduce, 4 bytes × parameters × 2(N−1)/N) and the training seconds.
set -euo pipefail

ROUNDS=3
while getopts "r:" opt; do
  case "$opt" in
    r) ROUNDS="$OPTARG" ;;
    *) echo "usage: $0 [-r ROUNDS] BUILD_DIR OUT.jsonl" >&2; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
(($# == 2)) || { echo "usage: $0 [-r ROUNDS] BUILD_DIR OUT.jsonl" >&2; exit 2; }
BIN="$(cd "$1" && pwd)/zotrain"
OUT="$2"
command -v mpirun >/dev/null || { echo "distributed: mpirun missing (Debian: openmpi-bin)" >&2; exit 2; }
MPIRUN=(mpirun --oversubscribe -np)
[[ $(id -u) == 0 ]] && MPIRUN=(mpirun --allow-run-as-root --oversubscribe -np)
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
: >"$OUT"

# name | mode | flags (data: Fashion-MNIST; 28×28 inputs for every model). f32 Full ZO at
# --zo-layer-scale dim, every layer perturbed each step: the f32 defaults until 2026-12-07 (since
# then one layer per step, in turn, the linear ones by their outputs).
CASES=(
  "lenet5-zo|data|--model lenet5 --method zo --zo-layer-scale dim --batch 256 --train-limit 12800"
  "lenet5-zo-b64|data|--model lenet5 --method zo --zo-layer-scale dim --batch 64 --train-limit 12800"
  "lenet5-elastic|data|--model lenet5 --method elastic --batch 256 --train-limit 12800"
  "lenet5-elastic|directions|--model lenet5 --method elastic --batch 256 --train-limit 12800 --q 4"
  "lenet5-int8-elastic|data|--model lenet5 --precision int8 --method elastic --batch 256 --train-limit 12800"
  "mobilenetv2-zo|directions|--model mobilenetv2:0.35 --method zo --zo-layer-scale dim --batch 64 --q 4 --train-limit 1024"
  "resnet18-zo|directions|--model resnet18 --method zo --zo-layer-scale dim --batch 64 --q 4 --train-limit 256"
  "resnet18-npu-zo|directions|--model resnet18:0.25 --precision int8-npu --method zo --batch 64 --q 8 --train-limit 1024"
)

# One run: ranks (0: one plain process), threads, case fields; appends its line to OUT.
run() {
  local ranks=$1 threads=$2 name=$3 mode=$4 flags=$5 out="$WORK/run"
  local launch=("$BIN")
  ((ranks > 0)) && launch=("${MPIRUN[@]}" "$ranks" "$BIN")
  local dist=()
  ((ranks > 0)) && dist=(--distributed "$mode")
  # shellcheck disable=SC2086 # flags are words
  "${launch[@]}" train --data fashion-mnist $flags --epochs 1 --val-size 256 --test-limit 256 \
    --threads "$threads" "${dist[@]}" --out "$out" --overwrite 1 >/dev/null
  python3 - "$out/summary.json" "$name" "$mode" "$ranks" "$threads" "$OUT" "$flags" <<'EOF'
import json, sys
s = json.load(open(sys.argv[1]))
line = {"case": sys.argv[2], "mode": sys.argv[3], "flags": sys.argv[7], "ranks": max(1, int(sys.argv[4])),
        "threads": int(sys.argv[5]), "bytes_sent_per_step": s["bytes_sent_per_step"],
        "num_parameters": s["num_parameters"], "train_seconds": s["train_seconds"],
        "forward_passes": s["forward_passes"], "test_acc": s["final_test_acc"]}
open(sys.argv[6], "a").write(json.dumps(line) + "\n")
EOF
}

for c in "${CASES[@]}"; do
  IFS='|' read -r name mode flags <<<"$c"
  echo "distributed: $name ($mode)" >&2
  for ((i = 0; i < ROUNDS; ++i)); do
    run 0 1 "$name" "$mode" "$flags"
    run 0 2 "$name" "$mode" "$flags"
    run 2 1 "$name" "$mode" "$flags"
  done
done
echo "distributed: results in $OUT" >&2

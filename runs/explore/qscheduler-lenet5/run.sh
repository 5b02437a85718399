#!/usr/bin/env bash
# Exploration (one seed): LeNet-5 Full ZO on Fashion-MNIST, fixed q against QScheduler, 10 epochs.
# Run from the repository root: runs/explore/qscheduler-lenet5/run.sh [path/to/zotrain]
set -euo pipefail
BIN="${1:-build/zotrain}"
OUT=runs/explore/qscheduler-lenet5
common="--config configs/fp32/lenet5-fashion-zo.toml --epochs 10 --seed 0"
{
  for q in 1 2 4 8; do echo "$common --q $q --out $OUT/fixed-q$q"; done
  echo "$common --q-schedule qscheduler --q0 1 --q-patience 2 --q-tau 0.01 --q-max 8 --out $OUT/qscheduler"
} | xargs -P 2 -I{} sh -c "$BIN train {} > /dev/null 2>&1"

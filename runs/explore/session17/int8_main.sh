#!/bin/bash
# Session 17: the integer weight average (ema_decay) on the int8 defaults, LeNet-5 Fashion-MNIST,
# elastic (INT8*, Cls1 default bp_layers) and Full ZO, 10 and 20 epochs, 3 seeds; binary
# /tmp/zt-iema (the working tree that adds int8 ema_decay). Results:
# runs/explore/session17/int8main/<name>/s<seed>/
BIN=${ZOTRAIN_BIN:-build/zotrain}
OUT=runs/explore/session17/int8main
run() { # name seed args...
  local name=$1 seed=$2; shift 2
  [ -f $OUT/$name/s$seed/summary.json ] && return
  $BIN train --model lenet5 --data fashion-mnist --precision int8 --seed $seed --threads 1 \
    --out $OUT/$name/s$seed --overwrite 1 "$@" > /dev/null 2>&1
}
for seed in 0 1 2; do
  for m in elastic zo; do
    run $m $seed --method $m &
    run $m-ema0.999 $seed --method $m --ema-decay 0.999
    wait
    run $m-e20 $seed --method $m --epochs 20 &
    run $m-ema0.9995 $seed --method $m --ema-decay 0.9995
    wait
  done
done
# INT8 (NITI) Full BP with and without the average, 10 epochs.
for seed in 0 1 2; do
  run bp $seed --method bp &
  run bp-ema0.999 $seed --method bp --ema-decay 0.999
  wait
done

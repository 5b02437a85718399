#!/bin/bash
# Session 16: the parameter average (ema_decay) on the main job's defaults, 10 epochs, 3 seeds,
# LeNet-5 Fashion-MNIST, elastic (Cls1 default bp_layers) and Full ZO; binary /tmp/zt-ema2
# (= the commit that adds ema_decay). Results: runs/explore/session16/main/<name>/s<seed>/
BIN=${ZOTRAIN_BIN:-build/zotrain}
OUT=runs/explore/session16/main
run() { # name seed args...
  local name=$1 seed=$2; shift 2
  [ -f $OUT/$name/s$seed/summary.json ] && return
  $BIN train --model lenet5 --data fashion-mnist --seed $seed --threads 1 --out $OUT/$name/s$seed --overwrite 1 "$@" > /dev/null 2>&1
}
for seed in 0 1 2; do
  for m in elastic zo; do
    run $m $seed --method $m &
    run $m-ema0.999 $seed --method $m --ema-decay 0.999
    wait
    run $m-ema0.9995 $seed --method $m --ema-decay 0.9995
  done
done

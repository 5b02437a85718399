#!/bin/bash
# Session 16: the main job's default elastic run for 20 epochs without the average (is 10 with it
# as good?), then the 100-epoch Fashion rows with ema_decay (seed 0). Binary /tmp/zt-ema2.
BIN=${ZOTRAIN_BIN:-build/zotrain}
OUT=runs/explore/session16/main
for seed in 0 1 2; do
  d=$OUT/elastic-e20/s$seed
  [ -f $d/summary.json ] || $BIN train --model lenet5 --data fashion-mnist --method elastic --epochs 20 --seed $seed --threads 1 --out $d --overwrite 1 > /dev/null 2>&1 &
  [ $seed = 1 ] && wait
done
wait
A=configs/paper/ablation
scripts/reproduce.sh -j 2 -s 0 $A/lenet5-fashion-cls1-fp32-cyclic-wd5e-4-ema{,-zolr3e-3}.toml $A/lenet5-fashion-cls2-fp32-cyclic-ema{,-zolr3e-3}.toml \
  $A/lenet5-fashion-zo-fp32-dim-lr8e-4-decay0.9-ema.toml

#!/bin/sh
# Issue 17, QScheduler part: the ResNet18:0.25 int8-npu fine-tuning of docs/reproduction.md
# ("QScheduler: fixed q against the scheduler") with --train-layers 2 (the last residual block
# and the FC) instead of the FC alone; seed 0, one thread, runs one after another.
cd "$(dirname "$0")/../../.."
for c in q8 q32 qsched; do
  out=runs/explore/qsched-train-layers2/resnet18-npu-$c
  [ -f "$out/summary.json" ] && continue
  build/zotrain train --config configs/qscheduler/resnet18-npu-$c.toml --train-layers 2 \
    --seed 0 --threads 1 --out "$out" > /dev/null 2>&1
done
# The block with smaller ZO steps (q = 8): is it the step size?
for lr in 0.003 0.001; do
  out=runs/explore/qsched-train-layers2/resnet18-npu-q8-lr$lr
  [ -f "$out/summary.json" ] && continue
  build/zotrain train --config configs/qscheduler/resnet18-npu-q8.toml --train-layers 2 \
    --zo-lr $lr --seed 0 --threads 1 --out "$out" > /dev/null 2>&1
done
# q = 32 with the smaller step
out=runs/explore/qsched-train-layers2/resnet18-npu-q32-lr0.001
[ -f "$out/summary.json" ] ||
  build/zotrain train --config configs/qscheduler/resnet18-npu-q32.toml --train-layers 2 \
    --zo-lr 0.001 --seed 0 --threads 1 --out "$out" > /dev/null 2>&1

#!/usr/bin/env bash
# Thirty-fifth session: the QScheduler f32 fine-tuning rows (the last FC of a BP-pretrained
# ResNet18:0.25 / MobileNetV2:0.35 on Fashion-MNIST turned 90°, configs/qscheduler/) with the FC
# estimated by its outputs (zo_activity; cyclic over one layer is that layer every step).
# Step: seed 0's validation at q = 8; then 3 seeds per q. Results in
# runs/explore/session35/qsched/<model>-<variant>/s<seed>/; qsched_summary.py prints them.
set -euo pipefail
cd "$(dirname "$0")/../../.."
ZOTRAIN="${ZOTRAIN_BIN:-build/zotrain}"
out=runs/explore/session35/qsched
act="--zo-layer-scale cyclic --zo-activity 1"
for m in resnet18 mbv2; do
  for alr in 1e-3 3e-3 1e-2 3e-2 1e-1 3e-1; do
    $ZOTRAIN train --config configs/qscheduler/$m-f32-q8.toml $act --zo-activity-lr $alr --seed 0 \
      --out $out/$m-q8-alr$alr/s0 > /dev/null
  done
done
# 3 seeds at the best step on seed 0's validation (3e-2 for both), per q and the scheduler.
for m in resnet18 mbv2; do
  for c in q8 q32 q128 qsched; do
    for s in 0 1 2; do
      $ZOTRAIN train --config configs/qscheduler/$m-f32-$c.toml $act --zo-activity-lr 3e-2 --seed $s \
        --out $out/$m-$c-act/s$s > /dev/null
    done
  done
  for s in 0 1 2; do
    $ZOTRAIN train --config configs/qscheduler/$m-f32-q8.toml $act --zo-activity-lr 3e-2 --q 1 \
      --seed $s --out $out/$m-q1-act/s$s > /dev/null
  done
done

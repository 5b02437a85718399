#!/usr/bin/env bash
# Thirty-fifth session (2026-12-07): the Full ZO f32 defaults with output turns (zo_activity,
# falling back to weight perturbation where batch norm follows a linear layer) checked on
# PointNet's stand-in over 10 epochs, against the previous defaults (zo_layer_scale dim,
# zo_lr 2e-4, under which zo_activity yields). Binary: the commit that made them the defaults.
# Results: runs/explore/session35/pointnet-zo-10ep/<variant>/s<seed>/; summary.py prints them.
set -euo pipefail
cd "$(dirname "$0")/../../.."
ZOTRAIN="${ZOTRAIN_BIN:-build/zotrain}"
out=runs/explore/session35/pointnet-zo-10ep
common="--model pointnet --data modelnet40-standin --points 128 --val-size 500 --batch 32 --epochs 10 --threads 1 --method zo"
for s in 0 1 2; do
  $ZOTRAIN train $common --seed $s --out $out/new-defaults/s$s > /dev/null &
  $ZOTRAIN train $common --seed $s --zo-layer-scale dim --zo-lr 2e-4 --out $out/old-defaults/s$s > /dev/null
  wait
done
# Which part gains: the new defaults without the output turns (cyclic at zo_lr 1.5e-3 alone).
for s in 0 1 2; do
  $ZOTRAIN train $common --seed $s --zo-activity 0 --out $out/cyclic-only/s$s > /dev/null
done
# The Full ZO f32 defaults' output turns on MNIST over the paper's 100-epoch schedule, q = 1,
# one run at a time beside CI (results in runs/repro/<config>/s<seed>/).
ZOTRAIN_BIN="$ZOTRAIN" scripts/reproduce.sh -j 1 -s "0 1 2" \
  configs/paper/ablation/lenet5-mnist-zo-fp32-cyclic-activity-scaled-alr8e-3.toml
# The same at Fashion-MNIST's best output step, 1.6e-2.
ZOTRAIN_BIN="$ZOTRAIN" scripts/reproduce.sh -j 1 -s "0 1 2" \
  configs/paper/ablation/lenet5-mnist-zo-fp32-cyclic-activity-scaled-alr1.6e-2.toml
# PointNet's Table 2 Full ZO row (15 epochs, configs/pointnet/pointnet-standin-zo.toml) with the
# new Full ZO f32 defaults.
ZOTRAIN_BIN="$ZOTRAIN" scripts/reproduce.sh -j 1 -s "0 1 2" configs/pointnet/ablation/pointnet-standin-zo-defaults.toml

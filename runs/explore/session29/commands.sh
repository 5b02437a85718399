#!/usr/bin/env bash
# Twenty-ninth session (2026-12-06): LeNet-5 Fashion-MNIST Full ZO with more directions a step
# (q = 8 at 1x, 4x and 8x the step; q doubling from 1 to 16 when validation stalls), then the
# hybrids' Cls2 rows with q = 8. Binaries: b44daf2, 3f5e03b, d75402d (the f32 paths the same bits).
A=configs/paper/ablation
scripts/reproduce.sh -j 2 -s 0 $A/lenet5-fashion-zo-fp32-dim-lr4e-4-decay0.9-qsched16.toml \
  $A/lenet5-fashion-zo-fp32-dim-lr4e-4-decay0.9-q8.toml
scripts/reproduce.sh -j 1 -s 0 $A/lenet5-fashion-zo-fp32-dim-lr1.6e-3-decay0.9-q8.toml
scripts/reproduce.sh -j 2 -s "1 2" $A/lenet5-fashion-zo-fp32-dim-lr1.6e-3-decay0.9-q8.toml
# stopped at epoch 24 (it trailed the 1.6e-3 run by 0.19 of training loss there):
scripts/reproduce.sh -j 1 -s 0 $A/lenet5-fashion-zo-fp32-dim-lr3.2e-3-decay0.9-q8.toml
scripts/reproduce.sh -j 1 -s 0 $A/lenet5-fashion-cls2-fp32-cyclic-q8-zolr6e-3.toml \
  $A/lenet5-mnist-cls2-fp32-cyclic-wd5e-4-ema-q8-zolr6e-3.toml
scripts/reproduce.sh -j 2 -s "1 2" $A/lenet5-fashion-cls2-fp32-cyclic-q8-zolr6e-3.toml
scripts/reproduce.sh -j 2 -s "1 2" $A/lenet5-mnist-cls2-fp32-cyclic-wd5e-4-ema-q8-zolr6e-3.toml

#!/usr/bin/env bash
# Thirty-second session (2026-12-06): LeNet-5 Fashion-MNIST Cls2. q = 16 over the paper's
# schedule stretched 3x to 300 epochs with the average (binary of 8d00bb0; resumable with
# `zotrain train --resume runs/repro/<row>/s<seed>`), and block-coordinate ZO with the layer in
# turn's step scaled by its size (zo_cycle_scale_power, new this session; binary of its working
# tree). One thread per run; the 300-epoch runs at nice 19 beside the others.
A=configs/paper/ablation
nice -n 19 scripts/reproduce.sh -j 2 -s "0 1" $A/lenet5-fashion-cls2-fp32-cyclic-q16-zolr8.5e-3-e300-ema.toml
scripts/reproduce.sh -j 2 -s "0 1 2" $A/lenet5-fashion-cls2-fp32-cyclic-scale0.5.toml \
    $A/lenet5-fashion-cls2-fp32-cyclic-scale1.toml
# Not run yet (for the next session): seed 2 of the 300-epoch row, and Full BP over the same
# 300-epoch schedule, the reference of its target
# scripts/reproduce.sh -j 2 -s 2 $A/lenet5-fashion-cls2-fp32-cyclic-q16-zolr8.5e-3-e300-ema.toml
# scripts/reproduce.sh -j 2 -s "0 1 2" $A/lenet5-fashion-bp-fp32-e300.toml

#!/usr/bin/env bash
# Thirty-first session (2026-12-06): LeNet-5 Fashion-MNIST Cls2. Block-coordinate ZO with the
# layers' turns weighted by their sizes (zo_cycle_power, new in a28aecc; binary of its working
# tree), and q = 16 over the paper's schedule stretched 2x to 200 epochs, with the average
# (binary of cbeca79; no f32 code the runs use changed since). One thread per run, the 200-epoch
# runs at nice 19 beside the others.
A=configs/paper/ablation
scripts/reproduce.sh -j 2 -s "0 1" $A/lenet5-fashion-cls2-fp32-cyclic-q16-zolr8.5e-3-e200-ema.toml
# seed 2 after them, beside the session's CI check
scripts/reproduce.sh -j 1 -s 2 $A/lenet5-fashion-cls2-fp32-cyclic-q16-zolr8.5e-3-e200-ema.toml
scripts/reproduce.sh -j 2 -s "0 1 2" $A/lenet5-fashion-cls2-fp32-cyclic-pow0.5.toml \
    $A/lenet5-fashion-cls2-fp32-cyclic-pow1.toml $A/lenet5-fashion-cls2-fp32-cyclic-pow-0.5.toml

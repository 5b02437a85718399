#!/usr/bin/env bash
# Thirty-third session (2026-12-06): activity perturbation (zo_activity, new this session) on
# LeNet-5 Fashion-MNIST. One thread per run, two at a time (binary of its commit; the q = 1 rows
# beside nothing but a nice-19 Full BP run, the others at nice 19 beside CI). Runs resume with
# `zotrain train --resume runs/repro/<row>/s<seed>`.
A=configs/paper/ablation
# Full BP over 300 epochs, the reference of the 300-epoch hybrids' target
nice -n 19 scripts/reproduce.sh -j 1 -s "0 1 2" $A/lenet5-fashion-bp-fp32-e300.toml
# The step of the output-perturbation turns, seed 0, Cls2 at q = 1 (100 epochs; validation
# 83.32 / 84.08 / 83.64 for 5e-4 / 1e-3 / 2e-3):
# (their metrics in step-sweep/; the binary of c295d2e's tree with each example's difference
# unclipped, the bits of fa85681)
for lr in 0.0005 0.001 0.002; do
  build/zotrain train --config $A/lenet5-fashion-cls2-fp32-cyclic.toml --zo-activity 1 \
      --zo-activity-lr $lr --out runs/explore/session33/step-sweep/lr$lr
done
# At 1e-3, against the rows at equal passes (Cls2 and Cls1 cyclic, Full ZO)
scripts/reproduce.sh -j 2 -s "0 1 2" $A/lenet5-fashion-cls2-fp32-cyclic-activity.toml
nice -n 19 scripts/reproduce.sh -j 2 -s "0 1 2" $A/lenet5-fashion-cls1-fp32-cyclic-activity.toml \
    $A/lenet5-fashion-zo-fp32-cyclic-activity.toml
# q = 16 over 200 epochs with the average: the output-perturbation step, seed 0
nice -n 19 scripts/reproduce.sh -j 2 -s 0 $A/lenet5-fashion-cls2-fp32-cyclic-q16-e200-ema-activity{4e-3,8e-3}.toml
# (4e-3 stopped at epoch 48; 8e-3 seed 0 ran its 200 epochs). Seeds 1 and 2 of 8e-3, one at a
# time, started at the session's end (resume each with zotrain train --resume):
nice -n 19 scripts/reproduce.sh -j 1 -s "1 2" $A/lenet5-fashion-cls2-fp32-cyclic-q16-e200-ema-activity8e-3.toml

#!/usr/bin/env bash
# Thirtieth session (2026-12-06): LeNet-5 Fashion-MNIST Cls2 with 16 and 32 directions a step, and
# q growing on stalls with the step growing with it. q = 16 ran on the binary of be3af42, the
# others on 2100a6a (which adds q_lr_exponent; the f32 paths the runs use are unchanged).
A=configs/paper/ablation
# seed 0 first, then seeds 1 and 2 two at a time
scripts/reproduce.sh -j 1 -s 0 $A/lenet5-fashion-cls2-fp32-cyclic-q16-zolr8.5e-3.toml
scripts/reproduce.sh -j 2 -s "1 2" $A/lenet5-fashion-cls2-fp32-cyclic-q16-zolr8.5e-3.toml
# q growing on stalls with the step growing as q^0.63
scripts/reproduce.sh -j 1 -s 0 $A/lenet5-fashion-cls2-fp32-cyclic-qsched16-lrexp0.63.toml
# q = 32 at the step x q^0.63 (seed 0; ran alongside the session's CI check)
scripts/reproduce.sh -j 1 -s 0 $A/lenet5-fashion-cls2-fp32-cyclic-q32-zolr1.3e-2.toml

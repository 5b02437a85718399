#!/bin/bash
# Session 16: the 100-epoch rows with the parameters' average, seeds 1 and 2 (Fashion) and MNIST
# seeds 0-2; binary /tmp/zt-ema2.
A=configs/paper/ablation
while pgrep -f sweep2.sh > /dev/null; do sleep 20; done
scripts/reproduce.sh -j 2 -s "1 2" $A/lenet5-fashion-cls1-fp32-cyclic-wd5e-4-ema.toml $A/lenet5-fashion-cls2-fp32-cyclic-ema.toml
scripts/reproduce.sh -j 2 -s "0 1 2" $A/lenet5-mnist-cls1-fp32-cyclic-wd5e-4-ema.toml $A/lenet5-mnist-cls2-fp32-cyclic-wd5e-4-ema.toml

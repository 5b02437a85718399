#!/usr/bin/env bash
# issue 17, fifteenth session: the hybrids with lr x0.9 every 10 epochs (seed 0, one core)
cd "$(dirname "$0")/../../.." && scripts/reproduce.sh -j 1 -s 0 \
    configs/paper/ablation/lenet5-fashion-cls{1-fp32-cyclic-wd5e-4,2-fp32-cyclic}-decay0.9.toml \
    configs/paper/ablation/lenet5-mnist-cls{1,2}-fp32-cyclic-wd5e-4-decay0.9.toml

#!/usr/bin/env bash
# issue 17, fifteenth session: MNIST Full ZO (dim, x0.9) over 150 epochs, 3 seeds, and the MNIST
# Cls2 decay-0.9 row on seeds 1 and 2 (two cores)
cd "$(dirname "$0")/../../.." && scripts/reproduce.sh -j 2 -s "0 1 2" configs/paper/ablation/lenet5-mnist-zo-fp32-dim-decay0.9-e150.toml &&
  scripts/reproduce.sh -j 2 -s "1 2" configs/paper/ablation/lenet5-mnist-cls2-fp32-cyclic-wd5e-4-decay0.9.toml

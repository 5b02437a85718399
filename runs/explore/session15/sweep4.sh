#!/usr/bin/env bash
# issue 17, fifteenth session: Fashion Full ZO (dim, zo_lr 4e-4, x0.9) over 150 epochs, 3 seeds (one core)
cd "$(dirname "$0")/../../.." && scripts/reproduce.sh -j 1 -s "0 1 2" configs/paper/ablation/lenet5-fashion-zo-fp32-dim-lr4e-4-decay0.9-e150.toml

#!/usr/bin/env bash
# issue 17, fourteenth session: MNIST Full ZO, layer scaling at zo_lr 3e-4 with decay 0.9, seeds 1-2
cd "$(dirname "$0")/../../.." && scripts/reproduce.sh -j 2 -s "1 2" configs/paper/ablation/lenet5-mnist-zo-fp32-dim-lr3e-4-decay0.9.toml

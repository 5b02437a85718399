#!/usr/bin/env bash
# issue 17, fourteenth session: MNIST Full ZO with layer scaling, lr x0.85 every 10 epochs (one core)
cd "$(dirname "$0")/../../.." && scripts/reproduce.sh -j 1 -s "0 1 2" configs/paper/ablation/lenet5-mnist-zo-fp32-dim-decay0.85.toml

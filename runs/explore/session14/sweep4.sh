#!/usr/bin/env bash
# issue 17, fourteenth session: MNIST Full ZO with layer scaling and decay 0.9 on seeds 1-2 (one core)
cd "$(dirname "$0")/../../.." && scripts/reproduce.sh -j 1 -s "1 2" configs/paper/ablation/lenet5-mnist-zo-fp32-dim-decay0.9.toml && \
scripts/reproduce.sh -j 1 -s 0 configs/paper/ablation/lenet5-mnist-zo-fp32-dim-lr3e-4-decay0.9.toml

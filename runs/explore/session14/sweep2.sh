#!/usr/bin/env bash
# issue 17, fourteenth session: Full ZO with layer scaling, slower or no decay (one core)
cd "$(dirname "$0")/../../.." && scripts/reproduce.sh -j 1 -s 0 \
  configs/paper/ablation/lenet5-fashion-zo-fp32-dim-lr4e-4-nodecay.toml \
  configs/paper/ablation/lenet5-fashion-zo-fp32-dim-lr6e-4-decay0.9.toml && \
scripts/reproduce.sh -j 1 -s "1 2" configs/paper/ablation/lenet5-fashion-zo-fp32-dim-lr4e-4-decay0.9.toml

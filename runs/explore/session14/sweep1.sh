#!/usr/bin/env bash
# issue 17, fourteenth session: seed-0 screening on the paper's schedule (one core)
cd "$(dirname "$0")/../../.." && scripts/reproduce.sh -j 1 -s 0 \
  configs/paper/ablation/lenet5-fashion-zo-fp32-adam.toml \
  configs/paper/ablation/lenet5-fashion-cls2-int8star-cyclic-q2b64.toml \
  configs/paper/ablation/lenet5-fashion-zo-fp32-dim-lr4e-4-decay0.9.toml \
  configs/paper/ablation/lenet5-mnist-zo-fp32-adam.toml \
  configs/paper/ablation/lenet5-fashion-cls2-int8star-cyclic-sp97-bits2.toml \
  configs/paper/ablation/lenet5-mnist-zo-fp32-dim-decay0.9.toml

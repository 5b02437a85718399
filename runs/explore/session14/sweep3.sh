#!/usr/bin/env bash
# issue 17, fourteenth session: the INT8* cls2 winner on seeds 1-2, higher final sparsity (one core)
cd "$(dirname "$0")/../../.." && scripts/reproduce.sh -j 1 -s "1 2" configs/paper/ablation/lenet5-fashion-cls2-int8star-cyclic-sp97-bits2.toml && \
scripts/reproduce.sh -j 1 -s 0 configs/paper/ablation/lenet5-fashion-cls2-int8star-cyclic-sp99-bits2.toml \
  configs/paper/ablation/lenet5-fashion-cls2-fp32-cyclic-sp97.toml configs/paper/ablation/lenet5-fashion-cls1-fp32-cyclic-wd5e-4-sp97.toml

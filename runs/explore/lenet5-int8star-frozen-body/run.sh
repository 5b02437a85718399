#!/bin/sh
# Frozen-body control for the INT8* hybrids (issue 17): the cyclic rows with the ZO mask at
# p_zero 0.99999 (almost no body weight ever moves), seed 0, against the rows' seed 0.
cd "$(dirname "$0")/../../.."
for r in cls1 cls2; do
  [ -f runs/explore/lenet5-int8star-frozen-body/$r/summary.json ] ||
  build/zotrain train --config configs/paper/ablation/lenet5-fashion-$r-int8star-cyclic.toml \
    --sparsity 0.99999 --seed 0 --threads 1 --out runs/explore/lenet5-int8star-frozen-body/$r \
    > /dev/null 2>&1
done

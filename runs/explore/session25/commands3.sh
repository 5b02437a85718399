#!/usr/bin/env bash
# Twenty-fifth session, third sweep: the frozen-body controls (sparsity 0.99999: z almost never
# nonzero) of the 45-epoch PointNet INT8* hybrids with int_bn_divisor = "fixed", two seeds.
ZOTRAIN_BIN=/tmp/zt-s25 scripts/reproduce.sh -j 2 -s "0 1" \
  configs/paper/ablation/pointnet-standin-{cls1,cls2}-int8star-ema-e45-frozen-bnfixed.toml

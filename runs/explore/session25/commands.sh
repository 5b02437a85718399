#!/usr/bin/env bash
# Twenty-fifth session (2026-12-05): integer batch norm dividing each channel by its deviation in
# fixed point (int_bn_divisor = "fixed") instead of the power of two nearest it, on the PointNet
# INT8* hybrids over 45 epochs (six seeds, as the rows of sessions 18 and 23) and on PointNet INT8
# Full BP (three seeds). Binary: this session's int_bn_divisor commit.
cp build/zotrain /tmp/zt-s25
ZOTRAIN_BIN=/tmp/zt-s25 scripts/reproduce.sh -j 1 -s "0 1 2 3 4 5" \
  configs/paper/ablation/pointnet-standin-cls1-int8star-ema-e45-bnfixed.toml &
ZOTRAIN_BIN=/tmp/zt-s25 scripts/reproduce.sh -j 1 -s "0 1 2 3 4 5" \
  configs/paper/ablation/pointnet-standin-cls2-int8star-ema-e45-bnfixed.toml
wait
ZOTRAIN_BIN=/tmp/zt-s25 scripts/reproduce.sh -j 2 -s "0 1 2" \
  configs/paper/ablation/pointnet-standin-bp-int8-bnfixed.toml

#!/usr/bin/env bash
# Twenty-eighth session (2026-12-06): PointNet INT8* Full ZO over 180 epochs (seed 0; the
# 90-epoch run reached 73.33 % and was still rising). Binary: 413890f.
cp build/zotrain /tmp/zt-s28
ZOTRAIN_BIN=/tmp/zt-s28 scripts/reproduce.sh -j 1 -s "0" \
  configs/paper/ablation/pointnet-standin-zo-int8star-e180-bnfixed.toml

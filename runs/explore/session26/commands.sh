#!/usr/bin/env bash
# Twenty-sixth session (2026-12-05): PointNet INT8* with the fixed batch-norm divisor: Full ZO
# over 45 epochs (three seeds), and Cls1 with a smaller integer body step (zo_move 0.1, seeds 0
# and 1, against the same seeds of the session-25 row and its frozen-body control).
# Binary: c31fc92.
cp build/zotrain /tmp/zt-s26
ZOTRAIN_BIN=/tmp/zt-s26 scripts/reproduce.sh -j 1 -s "0 1 2" \
  configs/paper/ablation/pointnet-standin-zo-int8star-e45-bnfixed.toml
ZOTRAIN_BIN=/tmp/zt-s26 scripts/reproduce.sh -j 1 -s "0 1" \
  configs/paper/ablation/pointnet-standin-cls1-int8star-ema-e45-bnfixed-move0.1.toml

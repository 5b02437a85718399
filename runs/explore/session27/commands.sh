#!/usr/bin/env bash
# Twenty-seventh session (2026-12-06): PointNet INT8* Cls1 with smaller integer body steps
# (zo_move 0.03 and 0.01, seeds 0 and 1; session 26 ran 0.1 and the frozen body), and Full ZO
# over 90 epochs (seed 0; 45 epochs were still rising). Binary: 250d309.
cp build/zotrain /tmp/zt-s27
ZOTRAIN_BIN=/tmp/zt-s27 scripts/reproduce.sh -j 1 -s "0 1" \
  configs/paper/ablation/pointnet-standin-cls1-int8star-ema-e45-bnfixed-move0.03.toml \
  configs/paper/ablation/pointnet-standin-cls1-int8star-ema-e45-bnfixed-move0.01.toml
ZOTRAIN_BIN=/tmp/zt-s27 scripts/reproduce.sh -j 1 -s "0" \
  configs/paper/ablation/pointnet-standin-zo-int8star-e90-bnfixed.toml
# The head from a clean pass (head_grad clean, new in 38aee44): the zo_move 0.1 row again.
cp build/zotrain /tmp/zt-s27b
ZOTRAIN_BIN=/tmp/zt-s27b scripts/reproduce.sh -j 1 -s "0 1" \
  configs/paper/ablation/pointnet-standin-cls1-int8star-ema-e45-bnfixed-move0.1-clean.toml

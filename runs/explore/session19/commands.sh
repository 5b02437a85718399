#!/usr/bin/env bash
# Session 19 (issue 17): PointNet INT8* Cls1 over 45 epochs, three variants and the frozen-body
# control; the binary of 4400e93 (ZOTRAIN_BIN), two runs at a time, one thread each.
set -euo pipefail
cd "$(dirname "$0")/../../.."
scripts/reproduce.sh -j 2 -s "0 1 2" \
  configs/paper/ablation/pointnet-standin-cls1-int8star-ema-e45-move0.25.toml \
  configs/paper/ablation/pointnet-standin-cls1-int8star-ema-e45-move0.1.toml \
  configs/paper/ablation/pointnet-standin-cls1-int8star-ema9995-e45.toml       # sweep1.log
scripts/reproduce.sh -j 2 -s "0 1 2" \
  configs/paper/ablation/pointnet-standin-cls1-int8star-ema-e45-frozen.toml \
  configs/paper/ablation/pointnet-standin-cls1-int8star-ema-e45-sp05.toml      # sweep2.log
python3 runs/explore/session19/summary.py   # the table in docs/reproduction.md
scripts/reproduce.sh -j 1 -s "0 1 2" \
  configs/paper/ablation/pointnet-standin-cls2-int8star-ema-e45-frozen.toml    # sweep3.log

#!/usr/bin/env bash
# Session 21 (issue 17): PointNet INT8* hybrids with q = 4 directions a step over 45 epochs;
# the binary of 8d2a55b (ZOTRAIN_BIN), one thread per run.
set -euo pipefail
cd "$(dirname "$0")/../../.."
scripts/reproduce.sh -j 1 -s "0 1 2" \
  configs/paper/ablation/pointnet-standin-cls1-int8star-ema-e45-q4.toml \
  configs/paper/ablation/pointnet-standin-cls2-int8star-ema-e45-q4.toml   # sweep1.log

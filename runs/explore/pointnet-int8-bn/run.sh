#!/usr/bin/env bash
# Tuning runs of integer PointNet with integer batch norm (seed 0; binary of de13246 or later,
# which gives the same bits), in the order they were made. docs/reproduction.md, "PointNet on
# the integer path with integer batch norm", reads them.
set -euo pipefail
cd "$(dirname "$0")/../../.."
Z=build/zotrain
D=runs/explore/pointnet-int8-bn
BP=configs/pointnet/pointnet-standin-int8-bp.toml
CLS1=configs/pointnet/pointnet-standin-int8s8-cls1.toml
t() { local out=$1; shift; $Z train --threads 1 --model pointnet --out "$D/$out" "$@"; rm -f "$D/$out/checkpoint.bin"; }
t p-b3 --config $BP --bp-bits 3
t p-b321 --config $BP --bp-bits 3,4:2,7:1
t p-e15 --config $BP --bp-bits 3,5:2,10:1 --epochs 15
t p-bn64 --config $BP --bp-bits 3,4:2,7:1 --bn-stats-batches 64
t c1 --config $CLS1 --bp-layers 3 --bp-bits 3,5:2,10:1 --epochs 15 --bn-stats-batches 64
C="--config $CLS1 --bp-layers 3 --bp-bits 3,5:2,10:1 --epochs 15 --bn-stats-batches 64 --zo-layer-scale cyclic --sparsity 0.33,5:0.5,10:0.9"
t c1-cyc $C
t c1-e31 $C --int-eps 31
t c1-e63 $C --int-eps 63
# After the rows (configs/paper/pointnet-standin-cls1-int8star.toml, seed 0): the head on a
# frozen body (z all but never nonzero), and a sparser z.
R=configs/paper/pointnet-standin-cls1-int8star.toml
t c1-frozen --config $R --sparsity 0.99999
t c1-sp999 --config $R --sparsity 0.9,5:0.99,10:0.999
t c1-q4 --config $R --q 4

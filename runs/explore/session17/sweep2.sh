#!/bin/bash
# Session 17: the INT8* and PointNet int8 rows evaluated on the integer weight average
# (ema_decay 0.999), 3 seeds; binary /tmp/zt-iema2 (the working tree with the average around
# precise batch norm). Results in runs/repro/<config>/s<seed>/.
A=configs/paper/ablation
ZOTRAIN_BIN=${ZOTRAIN_BIN:-/tmp/zt-iema2} scripts/reproduce.sh -j 2 -s "0 1 2" \
  $A/lenet5-fashion-cls2-int8star-cyclic-ema0.999.toml $A/lenet5-fashion-cls1-int8star-cyclic-ema0.999.toml \
  $A/pointnet-standin-cls1-int8star-ema.toml $A/pointnet-standin-cls2-int8star-ema.toml \
  $A/pointnet-standin-bp-int8-ema.toml

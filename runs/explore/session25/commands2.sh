#!/usr/bin/env bash
# Twenty-fifth session, second sweep: the PointNet INT8* rows of configs/paper/ (15 epochs, no
# average) with int_bn_divisor = "fixed", three seeds. Binary: as commands.sh.
ZOTRAIN_BIN=/tmp/zt-s25 scripts/reproduce.sh -j 2 -s "0 1 2" \
  configs/paper/ablation/pointnet-standin-{cls1,cls2,zo}-int8star-bnfixed.toml

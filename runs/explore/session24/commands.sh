#!/usr/bin/env bash
# Twenty-fourth session (2026-12-05): the PointNet INT8* hybrids over 45 epochs with a longer
# integer average of the weights (ema_warmup 3, ema_decay 0.9995: the average spans about the last
# 2,048 steps, 18 epochs, where the default warm-up's spans ~510, 4.6 epochs), six seeds as the
# twenty-third session's rows. Binary: this session's ema_warmup commit.
cp build/zotrain /tmp/zt-s24
ZOTRAIN_BIN=/tmp/zt-s24 scripts/reproduce.sh -j 1 -s "0 1 2 3 4 5" \
  configs/paper/ablation/pointnet-standin-cls1-int8star-ema-e45-long.toml \
  configs/paper/ablation/pointnet-standin-cls2-int8star-ema-e45-long.toml

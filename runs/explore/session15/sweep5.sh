#!/usr/bin/env bash
# issue 17, fifteenth session: the INT8* PointNet Cls2 row with zo_move 0.25 on seeds 1 and 2 (one core)
cd "$(dirname "$0")/../../.." && scripts/reproduce.sh -j 1 -s "1 2" configs/paper/ablation/pointnet-standin-cls2-int8star-move0.25.toml

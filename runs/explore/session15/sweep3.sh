#!/usr/bin/env bash
# issue 17, fifteenth session: INT8* PointNet hybrids with a partial integer move (zo_move), seed 0
cd "$(dirname "$0")/../../.." && scripts/reproduce.sh -j 1 -s 0 \
    configs/paper/ablation/pointnet-standin-cls{1,2}-int8star-move{0.25,0.1}.toml

#!/usr/bin/env bash
# issue 17, fifteenth session: INT8* Cls2 cyclic with the integer step decayed by zo_move (seed 0, two cores)
cd "$(dirname "$0")/../../.." && scripts/reproduce.sh -j 2 -s 0 \
    configs/paper/ablation/lenet5-fashion-cls2-int8star-cyclic-move-{late,mid}.toml

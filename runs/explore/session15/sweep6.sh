#!/usr/bin/env bash
# issue 17, fifteenth session: the Cls1 rows with head weight decay stretched to 150 epochs, 3 seeds (two cores)
cd "$(dirname "$0")/../../.." && scripts/reproduce.sh -j 2 -s "0 1 2" \
    configs/paper/ablation/lenet5-{fashion,mnist}-cls1-fp32-cyclic-wd5e-4-e150.toml

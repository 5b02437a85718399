#!/usr/bin/env bash
# Session 20 (issue 17): the Fashion-MNIST Cls1 row and Full BP over 200 epochs (the comparison
# at the same epochs), Full BP's 100-epoch row on seeds 1 and 2, and MNIST Cls2 over 800 epochs;
# the binary of 0d0178d (ZOTRAIN_BIN), one thread per run.
set -euo pipefail
cd "$(dirname "$0")/../../.."
scripts/reproduce.sh -j 1 -s "0 1 2" \
  configs/paper/ablation/lenet5-fashion-cls1-fp32-cyclic-wd5e-4-e200-ema.toml \
  configs/paper/ablation/lenet5-fashion-bp-fp32-e200.toml                  # sweep1.log
scripts/reproduce.sh -j 1 -s "0 1 2" \
  configs/paper/ablation/lenet5-mnist-cls2-fp32-cyclic-wd5e-4-e800-ema.toml # sweep2.log
scripts/reproduce.sh -j 1 -s "1 2" configs/paper/lenet5-fashion-bp-fp32.toml  # sweep3.log
python3 runs/explore/session20/summary.py   # the table in docs/reproduction.md

#!/usr/bin/env bash
# Session 22 (issue 17): the MNIST Cls2 row (cyclic, head weight decay, the parameters' average)
# stretched once more, to 1600 epochs (16x the paper's passes); the binary of d1ad603
# (ZOTRAIN_BIN; this session's kernel changes give the same bits), one thread per run.
set -euo pipefail
cd "$(dirname "$0")/../../.."
scripts/reproduce.sh -j 2 -s "0 1" \
  configs/paper/ablation/lenet5-mnist-cls2-fp32-cyclic-wd5e-4-e1600-ema.toml  # sweep1.log
# Seed 2 (sweep2.log) was stopped at epoch 59 and its folder removed: seeds 0 and 1 had already
# ended below their 800-epoch results. To run it: scripts/reproduce.sh -j 1 -s "2" <the config>.
python3 runs/explore/session22/summary.py   # the table in docs/reproduction.md

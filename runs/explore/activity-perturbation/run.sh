#!/bin/sh
# The activity-perturbation prototype of 2026-12-02 (issue 17): LeNet-5 Cls1 on Fashion-MNIST,
# 4 epochs each, PyTorch from Debian's python3-torch, one thread a run, two at a time.
# Arguments of ap.py: mode bp_layers epochs zo_lr seed eps activity_lr.
cd "$(dirname "$0")"
P=/usr/bin/python3
$P ap.py wp 2 4 5e-4 > wp.txt &                     # weight perturbation (SPSA), the baseline
$P ap.py ap 2 4 1e-4 > ap1.txt; wait                # every body output perturbed at once
$P ap.py ap 2 4 3e-4 > ap3.txt &
$P ap.py mix 2 4 5e-4 0 1e-3 1e-3 > mix3.txt; wait  # convs by weights, fc1 by activity, one pass pair
for lr in 1e-3 3e-3 1e-2 3e-2; do $P ap.py split 2 4 5e-4 0 1e-3 $lr > split-$lr.txt; done  # separate pairs

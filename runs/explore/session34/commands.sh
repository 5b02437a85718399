#!/usr/bin/env bash
# Thirty-fourth session (2026-12-07): output turns (zo_activity) on the main job's 10 epochs,
# the q = 16 Cls2 seeds, and Full ZO with each linear layer's output step scaled by its output
# count (zo_activity_scale_power, new this session). One thread per run, at most two trainings
# at a time (binary of each run's commit; the same bits).
A=configs/paper/ablation
# The main job's 10 epochs (the elastic f32 defaults, Fashion-MNIST), Cls1 (--bp-layers 2) and
# Cls2 (--bp-layers 1), with and without the output turns at four steps: is zo_activity a
# default? (metrics in main-job-10ep/<variant>/s<seed>/)
for bp in 2 1; do for s in 0 1 2; do
  zotrain train --bp-layers $bp --seed $s --out runs/explore/session34/main-job-10ep/bp$bp-off/s$s
  for lr in 2e-3 1e-3 5e-4 2.5e-4; do
    zotrain train --bp-layers $bp --seed $s --zo-activity 1 --zo-activity-lr $lr \
        --out runs/explore/session34/main-job-10ep/bp$bp-act$lr/s$s
  done
done; done
# Seeds 1 and 2 of Cls2 q = 16 over 200 epochs with output turns at 8e-3 (seed 0: session 33;
# seed 1's first 27 epochs of session 33 were repeated bit for bit, its checkpoint being gone)
scripts/reproduce.sh -j 2 -s "1 2" $A/lenet5-fashion-cls2-fp32-cyclic-q16-e200-ema-activity8e-3.toml
# Full ZO with the output step per layer: fc1 1e-3, fc2 1.43e-3, fc3 1.2e-2
nice -n 19 scripts/reproduce.sh -j 1 -s "0 1 2" $A/lenet5-fashion-zo-fp32-cyclic-activity-scaled.toml
# Its output step (seed 0, validation), the convolutions' zo_lr, then 3 seeds of the best (1.6e-2)
# and of 8e-3 (the step the 10-epoch runs below prefer); 1.6e-2 with zo_lr 3e-3 stopped after
# seeds 0 and 1 (below 1.6e-2 alone)
nice -n 19 scripts/reproduce.sh -j 2 -s 0 $A/lenet5-fashion-zo-fp32-cyclic-activity-scaled-{alr5e-4,alr2e-3,alr4e-3,alr8e-3,alr1.6e-2,alr3.2e-2,zolr7.5e-4,zolr3e-3,alr8e-3-zolr3e-3}.toml
nice -n 19 scripts/reproduce.sh -j 2 -s "0 1 2" $A/lenet5-fashion-zo-fp32-cyclic-activity-scaled-alr1.6e-2.toml
nice -n 19 scripts/reproduce.sh -j 2 -s "0 1" $A/lenet5-fashion-zo-fp32-cyclic-activity-scaled-alr1.6e-2-zolr3e-3.toml
nice -n 19 scripts/reproduce.sh -j 2 -s "1 2" $A/lenet5-fashion-zo-fp32-cyclic-activity-scaled-alr8e-3.toml
# Full ZO's 10 epochs: the zo f32 defaults against the output turns with steps by output count
for s in 0 1 2; do
  zotrain train --method zo --seed $s --out runs/explore/session34/main-job-10ep/zo-off/s$s
  for lr in 8e-3 1.6e-2; do
    zotrain train --method zo --seed $s --zo-layer-scale cyclic --zo-lr 1.5e-3 --zo-activity 1 \
        --zo-activity-scale-power 1 --zo-activity-lr $lr \
        --out runs/explore/session34/main-job-10ep/zo-alr$lr/s$s
  done
done

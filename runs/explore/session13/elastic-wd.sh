#!/usr/bin/env bash
# issue 17, thirteenth session: the main job's 10 epochs (ElasticZO f32 defaults, Cls1) with and
# without head weight decay 5e-4, seeds 0-2, one thread each, one run at a time.
set -euo pipefail
BIN="${ZOTRAIN_BIN:-build/zotrain}"
OUT=runs/explore/session13/elastic-wd
for s in 0 1 2; do
  [[ -f $OUT/default/s$s/summary.json ]] || "$BIN" train --seed $s --threads 1 --out $OUT/default/s$s >/dev/null
  [[ -f $OUT/wd5e-4/s$s/summary.json ]] || "$BIN" train --seed $s --threads 1 --weight-decay 5e-4 --out $OUT/wd5e-4/s$s >/dev/null
done

#!/usr/bin/env bash
# How often the sign of ElasticZO-INT8*'s integer loss difference agrees with the sign of the
# exact (float) loss difference, for batch sizes 32..256, perturbation radii and the two integer
# losses (0 fraction bits: the paper's Eq. 12; 8: our Mitchell fixed point). Each setting trains
# ZO-Feat-Cls1 INT8* on Fashion-MNIST from scratch for 200 steps with --sign-agreement 1 and
# records the rate over those steps in runs/sign-agreement/b<B>-e<EPS>-f<F>/metrics.jsonl.
# Finished settings are skipped. Then: python3 scripts/summarize_signs.py runs/sign-agreement
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BIN="${ZOTRAIN_BIN:-$ROOT/build/zotrain}"
export ZOTRAIN_DATA="${ZOTRAIN_DATA:-$ROOT/data}"
JOBS="${JOBS:-2}"
for f in 0 8; do
  for eps in 1 3 7 15 31; do
    for b in 32 64 128 256; do
      out="$ROOT/runs/sign-agreement/b$b-e$eps-f$f"
      [[ -f "$out/summary.json" ]] && continue
      printf '%s\0' "$BIN train --precision int8 --method elastic --zo-layer-scale none --bp-layers 2 --data fashion-mnist --epochs 1 --batch $b --train-limit $((200 * b)) --val-size 1000 --int-eps $eps --loss-frac-bits $f --sign-agreement 1 --seed 0 --out $out"
    done
  done
done | xargs -0 -P "$JOBS" -I{} sh -c '{} > /dev/null'

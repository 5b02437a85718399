#!/usr/bin/env bash
# Runs reproduction configs over seeds: each (config, seed) trains into
# OUT/<config name>/s<seed>/ (OUT: runs/repro unless -o) and is skipped when its summary.json
# exists, so an interrupted sweep continues where it stopped.
#
#   scripts/reproduce.sh [-j JOBS] [-s "0 1 2"] [-o OUT] configs/fp32/*.toml
#
# Then: python3 scripts/summarize.py runs/repro  (the table for docs/reproduction.md)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
JOBS=1
SEEDS="0 1 2"
OUT="$ROOT/runs/repro"
while getopts "j:s:o:" opt; do
  case "$opt" in
    j) JOBS="$OPTARG" ;;
    s) SEEDS="$OPTARG" ;;
    o) OUT="$OPTARG" ;;
    *) echo "usage: $0 [-j JOBS] [-s SEEDS] [-o OUT] CONFIG..." >&2; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
(($# > 0)) || { echo "usage: $0 [-j JOBS] [-s SEEDS] [-o OUT] CONFIG..." >&2; exit 2; }
export ZOTRAIN_DATA="${ZOTRAIN_DATA:-$ROOT/data}"
BIN="${ZOTRAIN_BIN:-$ROOT/build/zotrain}"

for cfg in "$@"; do
  for seed in $SEEDS; do
    out="$OUT/$(basename "$cfg" .toml)/s$seed"
    [[ -f "$out/summary.json" ]] && continue
    printf '%s\0%s\0%s\0' "$cfg" "$seed" "$out"
  done
done | xargs -0 -r -n 3 -P "$JOBS" sh -c '
  # The queue is made up front: a run another job finished (or is running) since is skipped,
  # and the folder is locked for the run, so that two runs never write one folder at once.
  mkdir -p "$3"
  exec 9<"$3"
  flock -n 9 || { echo "reproduce: $1 seed $2 runs elsewhere; skipped"; exit 0; }
  [ -f "$3/summary.json" ] && exit 0
  echo "reproduce: $1 seed $2"
  "$0" train --config "$1" --seed "$2" --out "$3" > "$3/train.log" 2>&1 ||
    echo "reproduce: FAILED $1 seed $2 (see $3/train.log)"
' "$BIN"

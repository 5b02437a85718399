#!/usr/bin/env bash
# Perturbation lanes against splitting each layer's rows, on 2 threads: LeNet-5 ZO and ElasticZO
# steps (q = 4, two-point SPSA: 8 perturbed passes) at batch 1, 4, 16, 64 and 256, each run with
# --zo-lanes 1 (rows split over both threads) and 2 (one pass per thread), alternately `rounds`
# times (the machine is shared: a pair run back to back sees the same load). Prints the minimum
# and median ms per step of each run, and the ratio of the medians (rows / lanes: > 1 means
# lanes are faster).
#   bench/lanes.sh [build dir] [rounds]
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BIN="${1:-$ROOT/build}/zotrain"
ROUNDS="${2:-2}"
[[ -x "$BIN" ]] || { echo "lanes: $BIN not built" >&2; exit 2; }
step() {  # method batch lanes -> "min median"
  # Full ZO at --zo-layer-scale dim, every layer perturbed each step (the f32 defaults until
  # 2026-12-07; since then one layer per step, which lanes cannot run by outputs).
  local scale=()
  [[ $1 == zo ]] && scale=(--zo-layer-scale dim)
  "$BIN" bench --json --model lenet5 --input 1,28,28 --method "$1" "${scale[@]}" --q 4 --batch "$2" \
    --threads 2 --zo-lanes "$3" --steps $((2000 / ($2 < 16 ? 4 : $2 / 4))) --warmup 5 \
    --lr 0.01 --zo-lr 1e-4 |
    /usr/bin/python3 -c 'import json,sys; j=json.load(sys.stdin); print(j["ms_min"], j["ms_median"])'
}
for method in zo elastic; do
  for batch in 1 4 16 64 256; do
    for ((r = 0; r < ROUNDS; ++r)); do
      read -r rmin rmed <<<"$(step "$method" "$batch" 1)"
      read -r lmin lmed <<<"$(step "$method" "$batch" 2)"
      /usr/bin/python3 - "$method" "$batch" "$rmin" "$rmed" "$lmin" "$lmed" <<'PY'
import sys
m, b = sys.argv[1:3]
rmin, rmed, lmin, lmed = map(float, sys.argv[3:])
print(f"lenet5 {m} batch {b}, 2 threads: rows {rmin:.3f} / {rmed:.3f} ms, "
      f"lanes {lmin:.3f} / {lmed:.3f} ms (min / median), rows/lanes {rmed / lmed:.2f}")
PY
    done
  done
done

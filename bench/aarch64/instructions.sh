#!/usr/bin/env bash
# Instructions per training step on an emulated Cortex-A53 (and a CPU with dot products), per
# kernel set: `zotrain bench` of the aarch64 build (scripts/cross.sh) under qemu-aarch64 with
# the instruction-counting plugin insn_count.c, run for S and 2S steps; the difference over S is
# one step's instructions, with start-up and data generation cancelled. QEMU models no time: an
# in-order A53 runs roughly one to two of these instructions per cycle, but cache misses, NEON
# issue width and dual-issue pairing are not counted. One thread (qemu-user threads hang on
# some hosts).
#
#   bench/aarch64/instructions.sh [--steps S] [--batch B] [--out FILE]
#
# Prints a Markdown table (and writes it to FILE with --out); bench/aarch64/results.md keeps the
# measured ones.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
STEPS=100 BATCH=1 OUT=/dev/null
while (($#)); do
  case "$1" in
    --steps) STEPS="$2"; shift 2 ;;
    --batch) BATCH="$2"; shift 2 ;;
    --out) OUT="$2"; shift 2 ;;
    *) sed -n '2,12p' "$0" >&2; exit 2 ;;
  esac
done
BIN="$ROOT/build-aarch64/zotrain"
[[ -x "$BIN" ]] || { echo "instructions: no $BIN (run scripts/cross.sh aarch64 first)" >&2; exit 2; }
PLUGIN="$ROOT/build-aarch64/insn_count.so"
gcc -O2 -Wall -Wextra -shared -fPIC -fvisibility=hidden "$ROOT/bench/aarch64/insn_count.c" \
  -o "$PLUGIN"

# instructions CPU KERNELS STEPS ARGS...: the plugin's count for one bench run.
instructions() {
  local cpu="$1" kernels="$2" steps="$3"
  shift 3
  QEMU_CPU="$cpu" ZOTRAIN_KERNELS="$kernels" qemu-aarch64 -plugin "$PLUGIN" \
    -L /usr/aarch64-linux-gnu "$BIN" bench --model lenet5 --batch "$BATCH" --threads 1 \
    --warmup 2 --steps "$steps" "$@" 2>&1 >/dev/null | sed -n 's/^instructions: //p'
}

CASES=(
  "f32 Full BP|--method bp"
  "f32 Full ZO (Gaussian)|--method zo --zo-layer-scale dim"
  "f32 ElasticZO Cls1|--method elastic"
  "INT8 Full BP|--precision int8 --method bp"
  "INT8* Full ZO|--precision int8 --method zo"
  "ElasticZO-INT8 Cls1|--precision int8 --method elastic"
)
SETS=("cortex-a53 portable" "cortex-a53 neon" "max neon+dotprod")
{
  echo "LeNet-5, batch $BATCH, 1 thread: instructions per step ($((2 * STEPS)) - $STEPS steps)," \
    "$(date -u +%F), qemu-aarch64 $(qemu-aarch64 --version | sed -n 's/.*version \([0-9.]*\).*/\1/p')"
  echo
  echo "| step | portable (cortex-a53) | neon (cortex-a53) | neon+dotprod (max) | neon / portable | neon+dotprod / portable |"
  echo "|---|---|---|---|---|---|"
  for c in "${CASES[@]}"; do
    name="${c%%|*}" args="${c#*|}"
    row=() counts=()
    for s in "${SETS[@]}"; do
      read -r cpu kernels <<<"$s"
      # shellcheck disable=SC2086
      one=$(instructions "$cpu" "$kernels" "$STEPS" $args)
      # shellcheck disable=SC2086
      two=$(instructions "$cpu" "$kernels" $((2 * STEPS)) $args)
      counts+=($(((two - one) / STEPS)))
    done
    printf '| %s | %s | %s | %s | %.2f | %.2f |\n' "$name" "${counts[0]}" "${counts[1]}" \
      "${counts[2]}" "$(bc -l <<<"${counts[1]} / ${counts[0]}")" \
      "$(bc -l <<<"${counts[2]} / ${counts[0]}")"
  done
} | tee "$OUT"

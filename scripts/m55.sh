#!/usr/bin/env bash
# Builds the bare-metal Cortex-M55 program (device/m55) and checks that it trains to the same
# bits as `zotrain train` on this machine, under QEMU's mps3-an547 board (docs/devices.md).
#
#   scripts/m55.sh [--install] [--zotrain BIN] [--build-dir DIR]
#
# 1. with --install, installs what is missing: gcc-arm-none-eabi, libnewlib-arm-none-eabi,
#    libstdc++-arm-none-eabi-newlib, qemu-system-arm;
# 2. configures device/m55 with cmake/arm-none-eabi-m55.cmake into DIR (<repo>/build-m55), builds,
#    prints the memory regions the linker filled;
# 3. for each case below (one of them on the build whose RAM is 256 KB, the linker's limit): `zotrain device pack` (the first epoch, as the device reads it),
#    `zotrain train` with the same flags, the device program under qemu-system-arm (semihosting),
#    and `zotrain device compare` of the device's weights with the checkpoint, value by value.
# Exit code: the first failing step's. BIN defaults to <repo>/build/zotrain (scripts/test.sh
# builds it). Environment: ZOTRAIN_DATA (default <repo>/data), ZOTRAIN_JOBS (default nproc).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
JOBS="${ZOTRAIN_JOBS:-$(nproc)}"
ZOTRAIN="$ROOT/build/zotrain"
BUILD_DIR="$ROOT/build-m55"
INSTALL=0
say() { echo "m55: $*"; }
die() { echo "m55: error: $*" >&2; exit 1; }
while (($#)); do
  case "$1" in
    --install) INSTALL=1 ;;
    --zotrain) ZOTRAIN="$2"; shift ;;
    --build-dir) BUILD_DIR="$2"; shift ;;
    *) die "usage: scripts/m55.sh [--install] [--zotrain BIN] [--build-dir DIR]" ;;
  esac
  shift
done
PACKAGES=(gcc-arm-none-eabi libnewlib-arm-none-eabi libstdc++-arm-none-eabi-newlib qemu-system-arm)

if ((INSTALL)); then
  missing=()
  for p in "${PACKAGES[@]}"; do
    [[ "$(dpkg-query -W -f='${db:Status-Abbrev}' "$p" 2>/dev/null)" == ii* ]] || missing+=("$p")
  done
  if ((${#missing[@]})); then
    sudo=()
    ((EUID == 0)) || sudo=(sudo)
    say "installing packages: ${missing[*]}"
    DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -q --no-install-recommends \
      "${missing[@]}" || die "apt-get install failed for: ${missing[*]}"
  fi
fi
command -v arm-none-eabi-g++ >/dev/null || die "arm-none-eabi-g++ missing (scripts/m55.sh --install)"
command -v qemu-system-arm >/dev/null || die "qemu-system-arm missing (scripts/m55.sh --install)"
[[ -x "$ZOTRAIN" ]] || die "$ZOTRAIN: no zotrain to compare with (run scripts/test.sh first)"

say "building device/m55 in $BUILD_DIR"
cmake -S "$ROOT/device/m55" -B "$BUILD_DIR" -DCMAKE_TOOLCHAIN_FILE="$ROOT/cmake/arm-none-eabi-m55.cmake" \
  >/dev/null || die "cmake configure failed"
cmake --build "$BUILD_DIR" -j"$JOBS" 2>&1 | grep -E -A4 "error|warning|Memory region" ||
  true
for program in zotrain-m55 zotrain-m55-256k; do
  [[ -f "$BUILD_DIR/$program.elf" ]] || die "build failed"
  arm-none-eabi-size -A "$BUILD_DIR/$program.elf" |
    awk -v p="$program" '$1 ~ /^\.(text|data|bss)$/ {printf "m55: %-16s %-6s %8d bytes\n", p, $1, $2}'
done

export ZOTRAIN_DATA="${ZOTRAIN_DATA:-$ROOT/data}"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
SMALL="--model lenet5 --data mnist --precision int8 --val-size 64 --test-limit 64 --epochs 1"
# name|program (the 1 MB or the 256 KB build)|flags
CASES=(
  "elasticzo-int8-cls2-b1-256k|zotrain-m55-256k|--method elastic --bp-layers 1 --batch 1 --train-limit 64 --seed 5"
  "elasticzo-int8-cls2-b8|zotrain-m55|--method elastic --bp-layers 1 --batch 8 --train-limit 256 --seed 3"
  "elasticzo-int8-cls1-b1|zotrain-m55|--method elastic --bp-layers 2 --batch 1 --train-limit 48 --seed 1"
  "zo-int8-cyclic-q2-b4|zotrain-m55|--method zo --zo-layer-scale cyclic --q 2 --sparsity 0.5 --batch 4 --train-limit 128 --seed 2"
  "bp-int8-b4|zotrain-m55|--method bp --batch 4 --train-limit 128 --seed 4"
)
for c in "${CASES[@]}"; do
  IFS='|' read -r name program case_flags <<<"$c"
  flags="$SMALL $case_flags"
  dir="$WORK/$name"
  mkdir -p "$dir"
  # shellcheck disable=SC2086
  "$ZOTRAIN" device pack $flags --file "$dir/run.ztd" >/dev/null || die "$name: pack failed"
  # shellcheck disable=SC2086
  "$ZOTRAIN" train $flags --threads 1 --out "$dir/x86" >/dev/null || die "$name: train failed"
  (cd "$dir" && timeout 600 qemu-system-arm -M mps3-an547 -nographic -icount shift=0 \
    -kernel "$BUILD_DIR/$program.elf" \
    -semihosting-config enable=on,target=native,arg=zotrain-m55,arg=run.ztd,arg=m55.bin,arg=1000 \
    >"$dir/m55.log" 2>&1) || { cat "$dir/m55.log"; die "$name: the device program failed"; }
  say "$name: $(grep -E "^memory|^heap|^instructions" "$dir/m55.log" | paste -sd ';' -)"
  "$ZOTRAIN" device compare --weights "$dir/m55.bin" --checkpoint "$dir/x86/checkpoint.bin" ||
    die "$name: the device's weights differ from zotrain train's"
done
say "done"

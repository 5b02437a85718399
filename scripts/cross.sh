#!/usr/bin/env bash
# Cross-builds zotrain for 64-bit ARM Linux (the Raspberry Pi Zero 2 class) and runs its tests
# under qemu-aarch64, once as a Cortex-A53 (ARMv8.0: NEON, no dot product) and once as `max`.
#
#   scripts/cross.sh aarch64 [--subset] [ctest arguments, e.g. -R Kernel]
#
# --subset runs, in place of the whole suite, the one-thread subset that CI runs (qemu-user hangs
# in pthread_create on some hosts, so no test here may start a thread): the test suites that
# start none (every kernel in every ARM kernel set, the integer ops, the models, the data
# readers) under both CPUs, and scripts/replay.sh's short trainings, one per method and
# precision, against this machine's x86 build (build/zotrain), which must give the same bits:
# the f32 and int8-npu runs with the portable kernels on both sides, the NITI int8 runs with each
# side's own kernels (the x86 sets against neon and neon+dotprod).
#
# 1. installs what it needs, only what is missing: g++-aarch64-linux-gnu, qemu-user, and the
#    arm64 libraries by Debian's multiarch (dpkg --add-architecture arm64): zlib, libjpeg,
#    googletest. HDF5, oneDNN, ONNX, MPI and the Python module are left out (the device build:
#    libhdf5-dev:arm64 cannot be installed beside the amd64 one);
# 2. configures with cmake/aarch64-linux-gnu.cmake into <repo>/build-aarch64 and builds the
#    library, the CLI and the tests (Release, -Werror);
# 3. runs ctest twice, QEMU_CPU=cortex-a53 and QEMU_CPU=max (CMake runs every test binary
#    through qemu-aarch64); prints the size of the CLI and the kernels `zotrain info` names.
# Exit code: the first failing step's. Environment: ZOTRAIN_JOBS (default nproc).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
JOBS="${ZOTRAIN_JOBS:-$(nproc)}"
say() { echo "cross: $*"; }
die() { echo "cross: error: $*" >&2; exit 1; }

[[ "${1:-}" == aarch64 ]] || die "usage: scripts/cross.sh aarch64 [--subset] [ctest arguments]"
shift
SUBSET=0
if [[ "${1:-}" == --subset ]]; then
  SUBSET=1
  shift
fi
# The suites of the one-thread subset (gtest filter).
SUBSET_SUITES="Arena.*:Tensor.*:MemoryPlanner.*:QTensorQuantize.*:Philox.*:Rng.*:TensorFile.*"
SUBSET_SUITES+=":Batcher.*:Dataset*:Idx.*:ImageFolder.*:ImageSets.*:DataRegistry*:Rotat*"
SUBSET_SUITES+=":Kernel*:Int8*:NpuKernels.*:PhiloxRun.*:Models.*"
SUBSET_SUITES+=":ActivationPlan.*:Graph.*:IntLoss*:LayerSpec.*:LossSoftmaxCrossEntropy.*:Config.*"
SUBSET_SUITES+=":Perturbation.*:Ternary*:ZoEstimator.*:Int8Step.*:DeviceRun.*-Int8Training.*"
BUILD_DIR="$ROOT/build-aarch64"
PACKAGES=(g++-aarch64-linux-gnu qemu-user zlib1g-dev:arm64 libjpeg62-turbo-dev:arm64
  libgtest-dev:arm64 libgmock-dev:arm64 libcli11-dev nlohmann-json3-dev libtoml11-dev)

install_packages() {
  local missing=() p sudo=()
  for p in "${PACKAGES[@]}"; do
    [[ "$(dpkg-query -W -f='${db:Status-Abbrev}' "$p" 2>/dev/null)" == ii* ]] || missing+=("$p")
  done
  if ((${#missing[@]} == 0)); then
    say "packages already installed"
    return
  fi
  if ((EUID != 0)); then
    command -v sudo >/dev/null || die "need root (or sudo) to install: ${missing[*]}"
    sudo=(sudo)
  fi
  say "installing packages: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  dpkg --print-foreign-architectures | grep -qx arm64 || "${sudo[@]}" dpkg --add-architecture arm64
  "${sudo[@]}" apt-get update -q || die "apt-get update failed (are the Debian mirrors reachable?)"
  "${sudo[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}" ||
    die "apt-get install failed for: ${missing[*]}"
}

install_packages
say "building (Release, aarch64) in $BUILD_DIR"
cmake -S "$ROOT" -B "$BUILD_DIR" -DCMAKE_TOOLCHAIN_FILE="$ROOT/cmake/aarch64-linux-gnu.cmake" \
  -DCMAKE_BUILD_TYPE=Release -DZOTRAIN_WERROR=ON -DZOTRAIN_WITH_HDF5=OFF -DZOTRAIN_WITH_MPI=OFF \
  -DZOTRAIN_WITH_ONNX=OFF -DZOTRAIN_WITH_PYTHON=OFF -DZOTRAIN_BUILD_BENCH=OFF >/dev/null ||
  die "cmake configure failed"
cmake --build "$BUILD_DIR" -j"$JOBS" || die "build failed"
say "zotrain for aarch64: $(stat -c %s "$BUILD_DIR/zotrain") bytes ($(aarch64-linux-gnu-size "$BUILD_DIR/zotrain" | awk 'NR == 2 {print $1 " text, " $2 " data, " $3 " bss"}'))"
export ZOTRAIN_DATA="${ZOTRAIN_DATA:-$ROOT/data}"

# replay CPU KERNELS REGEX: scripts/replay.sh's cases REGEX, the x86 build against the aarch64
# CLI under qemu, both with kernel set KERNELS ("" for each side's own).
replay() {
  local cpu="$1" kernels="$2" only="$3" x86="$ROOT/build/zotrain"
  if [[ ! -x "$x86" ]]; then
    say "no x86 build at $x86: the replay against x86 is skipped (scripts/setup.sh makes one)"
    return
  fi
  local base="$BUILD_DIR/replay-base.sh" new="$BUILD_DIR/replay-new.sh"
  printf '#!/bin/sh
%sexec "%s" "$@"
' "${kernels:+ZOTRAIN_KERNELS=$kernels }" "$x86" >"$base"
  printf '#!/bin/sh
%sQEMU_CPU=%s exec qemu-aarch64 -L /usr/aarch64-linux-gnu "%s" "$@"
' \
    "${kernels:+ZOTRAIN_KERNELS=$kernels }" "$cpu" "$BUILD_DIR/zotrain" >"$new"
  chmod +x "$base" "$new"
  say "replay against x86 under -cpu $cpu, kernels ${kernels:-of each side}: $only"
  "$ROOT/scripts/replay.sh" --base-bin "$base" --new-bin "$new" --keep-arena 0 --only "$only" \
    --work "$BUILD_DIR/replay" | grep '^replay:' || die "aarch64 results differ from x86's"
}

if ((SUBSET)); then
  for cpu in cortex-a53 max; do
    say "the one-thread subset under qemu-aarch64 -cpu $cpu"
    QEMU_CPU=$cpu qemu-aarch64 -L /usr/aarch64-linux-gnu "$BUILD_DIR/zotrain" info | sed 's/^/  /'
    QEMU_CPU=$cpu timeout -s KILL 1200 qemu-aarch64 -L /usr/aarch64-linux-gnu \
      "$BUILD_DIR/tests/zotrain_tests" --gtest_brief=1 --gtest_filter="$SUBSET_SUITES" ||
      die "tests failed (or hung) under -cpu $cpu"
    replay "$cpu" "" '^int8-lenet5-(bp|zo|elastic-frac8)$'
  done
  replay cortex-a53 portable '^(f32-lenet5-(bp|zo|elastic-forward)|npu-lenet5-cached)$'
  say "done"
  exit 0
fi

for cpu in cortex-a53 max; do
  say "tests under qemu-aarch64 -cpu $cpu"
  QEMU_CPU=$cpu qemu-aarch64 -L /usr/aarch64-linux-gnu "$BUILD_DIR/zotrain" info | sed 's/^/  /'
  QEMU_CPU=$cpu ctest --test-dir "$BUILD_DIR" --output-on-failure --no-tests=error -j"$JOBS" "$@" ||
    die "tests failed under -cpu $cpu"
done
say "done"

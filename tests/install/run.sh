#!/usr/bin/env bash
# Installs a built zotrain into a temporary prefix, then configures, builds and runs the consumer
# project beside this script against it with find_package(zotrain). Expects it to print "6".
#
#   tests/install/run.sh [BUILD_DIR]      (default: <repo>/build, already built)
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
BUILD_DIR="$(cd "${1:-$ROOT/build}" && pwd)"

tmp="$(mktemp -d "${TMPDIR:-/tmp}/zotrain-install.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT

fail() { echo "install check: FAILED: $*" >&2; exit 1; }

cmake --install "$BUILD_DIR" --prefix "$tmp/prefix" >"$tmp/install.log" 2>&1 ||
  { cat "$tmp/install.log" >&2; fail "cmake --install $BUILD_DIR"; }
cmake -S "$HERE" -B "$tmp/build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$tmp/prefix" \
  >"$tmp/configure.log" 2>&1 ||
  { cat "$tmp/configure.log" >&2; fail "configuring the consumer with find_package(zotrain)"; }
cmake --build "$tmp/build" >"$tmp/build.log" 2>&1 ||
  { cat "$tmp/build.log" >&2; fail "building the consumer against zotrain::zotrain"; }
out="$("$tmp/build/consumer")" || fail "the consumer exited with $?"
[[ "$out" == "6" ]] || fail "the consumer printed '$out', expected '6'"
echo "install check: OK (find_package(zotrain), zotrain::zotrain, Tensor::zeros({2,3}).numel() == 6)"

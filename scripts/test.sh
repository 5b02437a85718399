#!/usr/bin/env bash
# Builds zotrain (Release, incremental, into <repo>/build) and runs all the tests with ctest.
#
#   scripts/test.sh [extra ctest arguments, e.g. -R Arena]
# ctest includes the install check (tests/install/run.sh: find_package(zotrain) on an installed
# copy). Exit code: ctest's. Run scripts/setup.sh --no-train first on a new machine.
# Environment: ZOTRAIN_BUILD_DIR (default <repo>/build), ZOTRAIN_JOBS (default nproc),
# ZOTRAIN_DATA (default <repo>/data), ZOTRAIN_REQUIRE_DATA=1 to fail instead of skip when a
# data set is missing, ZOTRAIN_BUILD_TYPE (default Release), ZOTRAIN_CMAKE_ARGS (more -D options,
# e.g. "-DZOTRAIN_SANITIZE=ON -DZOTRAIN_WERROR=ON", as .ci/run passes them).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_DIR="${ZOTRAIN_BUILD_DIR:-$ROOT/build}"
BUILD_TYPE="${ZOTRAIN_BUILD_TYPE:-Release}"
read -r -a CMAKE_ARGS <<<"${ZOTRAIN_CMAKE_ARGS:-}"
JOBS="${ZOTRAIN_JOBS:-$(nproc)}"
# Tests run in the build tree: point them at the repository's data (MNIST from setup.sh).
export ZOTRAIN_DATA="${ZOTRAIN_DATA:-$ROOT/data}"

say() { echo "test: $*"; }

say "building ($BUILD_TYPE ${CMAKE_ARGS[*]}) in $BUILD_DIR"
build_rc=0
cmake -S "$ROOT" -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE="$BUILD_TYPE" -DZOTRAIN_BUILD_TESTS=ON \
  "${CMAKE_ARGS[@]}" >/dev/null &&
  cmake --build "$BUILD_DIR" -j"$JOBS" || build_rc=$?
if ((build_rc != 0)); then
  echo "test: the build failed (exit $build_rc): no tests were run" >&2
  exit "$build_rc"
fi

exec ctest --test-dir "$BUILD_DIR" --output-on-failure --no-tests=error -j"$JOBS" "$@"

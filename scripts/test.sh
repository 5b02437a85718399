#!/usr/bin/env bash
# Builds zotrain (Release, incremental, into <repo>/build) and runs all the tests with ctest.
#
#   scripts/test.sh [extra ctest arguments, e.g. -R Arena]
#
# Also checks that an installed zotrain works with find_package (tests/install/run.sh), unless
# that check is already registered with ctest. Exit code: ctest's (or 1 if only the install
# check failed). Run scripts/setup.sh --no-train first on a new machine.
# Environment: ZOTRAIN_BUILD_DIR (default <repo>/build), ZOTRAIN_JOBS (default nproc),
# ZOTRAIN_DATA (default <repo>/data), ZOTRAIN_REQUIRE_DATA=1 to fail instead of skip when a
# data set is missing.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_DIR="${ZOTRAIN_BUILD_DIR:-$ROOT/build}"
JOBS="${ZOTRAIN_JOBS:-$(nproc)}"
# Tests run in the build tree: point them at the repository's data (MNIST from setup.sh).
export ZOTRAIN_DATA="${ZOTRAIN_DATA:-$ROOT/data}"

say() { echo "test: $*"; }

say "building (Release) in $BUILD_DIR"
build_rc=0
cmake -S "$ROOT" -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release -DZOTRAIN_BUILD_TESTS=ON >/dev/null &&
  cmake --build "$BUILD_DIR" -j"$JOBS" || build_rc=$?
if ((build_rc != 0)); then
  echo "test: the build failed (exit $build_rc): no tests were run" >&2
  exit "$build_rc"
fi

# The install check runs before ctest so that ctest's summary is the last thing printed.
install_rc=0
registered="$(ctest --test-dir "$BUILD_DIR" -N -R '^install\.' 2>/dev/null || true)"
if [[ "$registered" =~ Total\ Tests:\ [1-9] ]]; then
  say "install check is registered with ctest"
else
  say "install check: tests/install/run.sh"
  "$ROOT/tests/install/run.sh" "$BUILD_DIR" || install_rc=$?
  if ((install_rc != 0)); then
    echo "test: install check FAILED (exit $install_rc)" >&2
  fi
fi

ctest_rc=0
ctest --test-dir "$BUILD_DIR" --output-on-failure --no-tests=error -j"$JOBS" "$@" || ctest_rc=$?

if ((ctest_rc != 0)); then exit "$ctest_rc"; fi
if ((install_rc != 0)); then
  echo "test: ctest passed but the install check failed" >&2
  exit 1
fi

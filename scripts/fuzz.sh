#!/usr/bin/env bash
# Builds the libFuzzer targets of fuzz/ with Clang under AddressSanitizer + UndefinedBehavior-
# Sanitizer (build-fuzz/) and runs each for SECONDS (default 60) from its seed corpus
# (fuzz/corpus/<target>/), printing its executions. Exit 1 on any finding: a crash, a sanitizer
# report, an exception other than InputError, an input taking more than 10 s or more than 2 GB;
# its reproducer is left in build-fuzz/findings/ (replay: build-fuzz/fuzz/fuzz_<target> FILE).
#   scripts/fuzz.sh [SECONDS] [TARGET...]      (targets: idx toml_config checkpoint point_h5 jpeg)
#   scripts/fuzz.sh --ci                        (what CI runs: seed 1, a fixed number of inputs per
#                                               target, about 60 s each on 2 cores, so that CI
#                                               repeats the runs recorded in docs/reliability.md)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CI=0
if [[ "${1:-}" == --ci ]]; then CI=1; shift; fi
SECONDS_EACH=60
if [[ "${1:-}" =~ ^[0-9]+$ ]]; then SECONDS_EACH="$1"; shift; fi
# --ci: inputs per target, about 60 s of each on the 2-core machine of docs/reliability.md.
declare -A CI_RUNS=([idx]=10000 [toml_config]=70000 [checkpoint]=150000 [point_h5]=1500 [jpeg]=150000)
TARGETS=("$@")
((${#TARGETS[@]})) || TARGETS=(idx toml_config checkpoint point_h5 jpeg)
BUILD="${ZOTRAIN_FUZZ_BUILD_DIR:-$ROOT/build-fuzz}"
JOBS="${ZOTRAIN_JOBS:-$(nproc)}"
say() { echo "fuzz: $*"; }

command -v clang++-14 >/dev/null ||
  { echo "fuzz: clang++-14 not found (Debian: clang-14 libclang-rt-14-dev; scripts/setup.sh installs them)" >&2; exit 2; }
say "building the targets in $BUILD"
CC=clang-14 CXX=clang++-14 cmake -S "$ROOT" -B "$BUILD" -DCMAKE_BUILD_TYPE=Debug \
  -DCMAKE_CXX_FLAGS_DEBUG="-O1" -DZOTRAIN_FUZZ=ON -DZOTRAIN_BUILD_TESTS=OFF \
  -DZOTRAIN_BUILD_BENCH=OFF -DZOTRAIN_WITH_ONEDNN=OFF >/dev/null
cmake --build "$BUILD" -j"$JOBS" --target "${TARGETS[@]/#/fuzz_}" >/dev/null

mkdir -p "$BUILD/findings"
# libhdf5 leaks on some corrupt files, inside the library (fuzz/lsan.supp says which).
export LSAN_OPTIONS="suppressions=$ROOT/fuzz/lsan.supp:print_suppressions=0"
failed=()
for t in "${TARGETS[@]}"; do
  corpus="$BUILD/corpus/$t"  # what this machine's runs found, grown from the seeds
  ((CI)) && corpus="$BUILD/corpus-ci/$t" && rm -rf "$corpus"  # from the seeds alone
  mkdir -p "$corpus"
  log="$BUILD/fuzz_$t.log"
  # libhdf5 sizes its caches from the file's headers: a corrupt one asks malloc for up to 2^64
  # bytes, gets null and fails the call (an InputError of ours). Allowed for that target only;
  # every other reader must check a size before allocating it.
  malloc_limit=2048 asan="${ASAN_OPTIONS:-}"
  [[ "$t" == point_h5 ]] && malloc_limit=$((1 << 40)) asan="allocator_may_return_null=1"
  budget=(-max_total_time="$SECONDS_EACH")
  ((CI)) && budget=(-seed=1 -runs="${CI_RUNS[$t]}")
  if ASAN_OPTIONS="$asan" "$BUILD/fuzz/fuzz_$t" "${budget[@]}" -timeout=10 \
      -rss_limit_mb=2048 -malloc_limit_mb="$malloc_limit" -print_final_stats=1 -artifact_prefix="$BUILD/findings/$t-" \
      "$corpus" "$ROOT/fuzz/corpus/$t" >"$log" 2>&1; then
    status=ok
  else
    status=FINDING
    failed+=("$t")
  fi
  execs="$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)"
  rate="$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)"
  say "$t: $status, ${execs:-?} executions (${rate:-?}/s), corpus $(ls "$corpus" | wc -l) inputs"
  [[ "$status" == ok ]] || grep -m 5 -E 'ERROR|SUMMARY|terminate|what\(\)' "$log" | sed 's/^/fuzz:   /'
done
((${#failed[@]} == 0)) || { say "findings in: ${failed[*]} (logs: $BUILD/fuzz_<target>.log)"; exit 1; }
say "no findings"

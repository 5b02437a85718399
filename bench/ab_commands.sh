#!/usr/bin/env bash
# Times two whole commands in turn (A B A B ...) with /usr/bin/time and prints the median cpu
# seconds (user + sys) of each and the median of the pair-by-pair ratios A/B. Alternating keeps
# the ratio meaningful on a shared machine whose speed drifts; quote the ratio, not the times.
#
#   bench/ab_commands.sh [-n PAIRS] [-w WARMUP] 'COMMAND A' 'COMMAND B'
#
# PAIRS defaults to 7, WARMUP (runs of each, not counted) to 1. The commands' output is dropped.
set -euo pipefail

PAIRS=7
WARMUP=1
while getopts "n:w:" opt; do
  case "$opt" in
    n) PAIRS="$OPTARG" ;;
    w) WARMUP="$OPTARG" ;;
    *) echo "usage: $0 [-n PAIRS] [-w WARMUP] 'COMMAND A' 'COMMAND B'" >&2; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
(($# == 2)) || { echo "usage: $0 [-n PAIRS] [-w WARMUP] 'COMMAND A' 'COMMAND B'" >&2; exit 2; }
[[ -x /usr/bin/time ]] || { echo "ab_commands: /usr/bin/time missing (Debian: time)" >&2; exit 2; }

# cpu seconds of one run of a command (a string, split as the shell splits words).
cpu_seconds() {
  local out
  out="$(mktemp)"
  # shellcheck disable=SC2086 # the command is meant to be split into words
  /usr/bin/time -o "$out" -f "%U %S" $1 >/dev/null 2>&1 || {
    echo "ab_commands: command failed: $1" >&2
    rm -f "$out"
    exit 1
  }
  awk '{ printf "%.4f\n", $1 + $2 }' "$out"
  rm -f "$out"
}

for ((i = 0; i < WARMUP; ++i)); do cpu_seconds "$1" >/dev/null; cpu_seconds "$2" >/dev/null; done
a=() b=()
for ((i = 0; i < PAIRS; ++i)); do
  a+=("$(cpu_seconds "$1")")
  b+=("$(cpu_seconds "$2")")
done
/usr/bin/python3 - "${a[*]}" "${b[*]}" <<'EOF'
import statistics, sys
a = [float(x) for x in sys.argv[1].split()]
b = [float(x) for x in sys.argv[2].split()]
print(f"A median cpu s {statistics.median(a):.3f}  (min {min(a):.3f}, max {max(a):.3f})")
print(f"B median cpu s {statistics.median(b):.3f}  (min {min(b):.3f}, max {max(b):.3f})")
r = [x / y for x, y in zip(a, b)]
print(f"A/B median {statistics.median(r):.4f}  (min {min(r):.4f}, max {max(r):.4f}, {len(r)} pairs)")
EOF

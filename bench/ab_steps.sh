#!/usr/bin/env bash
# Two builds' step benchmarks side by side: runs zotrain_bench_steps of build A and of build B in
# turn (A B A B ...) `rounds` times on the rows a filter selects, and prints each row's median ms
# per step over the rounds for both and the ratio B/A (> 1: A is faster). Alternating keeps the
# ratio meaningful on a shared machine; a restructuring claims "unchanged" from it.
#   bench/ab_steps.sh BUILD_A BUILD_B [FILTER] [ROUNDS]
# FILTER defaults to the 1-thread LeNet-5 and MobileNetV2:0.35 rows; ROUNDS to 3.
set -euo pipefail
A="$1/bench/zotrain_bench_steps" B="$2/bench/zotrain_bench_steps"
FILTER="${3:-Step/(lenet5|mbv2-0.35-28)/.*threads:1}"
ROUNDS="${4:-3}"
for bin in "$A" "$B"; do [[ -x "$bin" ]] || { echo "ab_steps: $bin not built" >&2; exit 2; }; done
out="$(mktemp -d)"
for ((r = 0; r < ROUNDS; ++r)); do
  for side in A B; do
    bin="$A"; [[ "$side" == B ]] && bin="$B"
    "$bin" --benchmark_filter="$FILTER" --benchmark_min_time=0.5 --benchmark_format=json \
      >"$out/$side.$r.json" 2>/dev/null
  done
done
/usr/bin/python3 - "$out" "$ROUNDS" <<'EOF'
import json, statistics, sys
out, rounds = sys.argv[1], int(sys.argv[2])
ms = {"A": {}, "B": {}}
for side in ms:
    for r in range(rounds):
        for b in json.load(open(f"{out}/{side}.{r}.json"))["benchmarks"]:
            t = b["real_time"] * {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3}[b["time_unit"]]
            ms[side].setdefault(b["name"], []).append(t)
print(f"{'row':58s} {'A ms':>9s} {'B ms':>9s} {'B/A':>6s}")
for name, a in ms["A"].items():
    if name not in ms["B"]: continue
    ma, mb = statistics.median(a), statistics.median(ms["B"][name])
    print(f"{name:58s} {ma:9.3f} {mb:9.3f} {mb / ma:6.3f}")
EOF
rm -rf "$out"

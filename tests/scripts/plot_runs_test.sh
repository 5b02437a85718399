#!/usr/bin/env bash
# scripts/plot_runs.py on made-up runs: a PNG for seeds and a single run, and bad metrics
# refused by file and line. Skipped (77) where Debian's python3-matplotlib is missing.
set -euo pipefail
SRC="$1"
/usr/bin/python3 -c "import matplotlib" 2>/dev/null || { echo "skip: no python3-matplotlib"; exit 77; }
T="$(mktemp -d)"
trap 'rm -rf "$T"' EXIT
for s in 0 1; do
  mkdir -p "$T/a/s$s"
  for e in 1 2 3; do
    echo "{\"epoch\":$e,\"forward_passes\":$((e * 100)),\"test_acc\":0.$((5 + e + s)),\"q\":$e}"
  done > "$T/a/s$s/metrics.jsonl"
done
mkdir -p "$T/b"
cp "$T/a/s0/metrics.jsonl" "$T/b/"
"$SRC/scripts/plot_runs.py" "$T/acc.png" "$T/a=two seeds" "$T/b"
"$SRC/scripts/plot_runs.py" --x epoch --y q "$T/q.png" "$T/b"
for f in acc q; do
  [[ "$(head -c 4 "$T/$f.png" | od -An -c | tr -d ' ')" == "211PNG" ]] || { echo "not a PNG: $f"; exit 1; }
done
echo '{"epoch":1' > "$T/b/metrics.jsonl"
if out="$("$SRC/scripts/plot_runs.py" "$T/bad.png" "$T/b" 2>&1)"; then
  echo "bad metrics accepted"; exit 1
fi
[[ "$out" == *"$T/b/metrics.jsonl:1"* ]] || { echo "unclear error: $out"; exit 1; }
echo "plot_runs: ok"

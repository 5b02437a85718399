#!/usr/bin/env bash
# scripts/plot.py on made-up runs: a PNG with a q schedule and memory bars, and bad input refused
# by file and line. Skipped (77) where Debian's python3-matplotlib is missing.
set -euo pipefail
SRC="$1"
/usr/bin/python3 -c "import matplotlib" 2>/dev/null || { echo "skip: no python3-matplotlib"; exit 77; }
T="$(mktemp -d)"
trap 'rm -rf "$T"' EXIT
for run in bp zo; do
  mkdir -p "$T/$run"
  for e in 1 2 3; do
    echo "{\"epoch\":$e,\"forward_passes\":$((e * 100)),\"train_acc\":0.$((4 + e)),\"test_acc\":0.$((3 + e)),\"train_loss\":$((4 - e)).5,\"q\":$((e * e))}"
  done >"$T/$run/metrics.jsonl"
  echo "{\"config\":{\"method\":\"$run\",\"precision\":\"f32\"},\"bp_layers\":0,\"arena_bytes_by_bucket\":{\"parameters\":1000,\"activations\":$([[ $run == bp ]] && echo 5000 || echo 800)}}" >"$T/$run/summary.json"
done
"$SRC/scripts/plot.py" "$T/bp" "$T/zo" -o "$T/all.png" --title "made-up runs"
[[ "$(head -c 4 "$T/all.png" | od -An -c | tr -d ' ')" == "211PNG" ]] || { echo "not a PNG"; exit 1; }
(($(stat -c %s "$T/all.png") > 20000)) || { echo "a suspiciously small PNG"; exit 1; }
echo '{"epoch":1,"test_acc":0.5}' >"$T/zo/metrics.jsonl"
if out="$("$SRC/scripts/plot.py" "$T/zo" -o "$T/bad.png" 2>&1)"; then
  echo "metrics without fields accepted"; exit 1
fi
[[ "$out" == *"$T/zo/metrics.jsonl:1: no field"* ]] || { echo "unclear error: $out"; exit 1; }
if out="$("$SRC/scripts/plot.py" "$T/none" -o "$T/bad.png" 2>&1)"; then
  echo "a missing folder accepted"; exit 1
fi
[[ "$out" == *"no metrics.jsonl"* ]] || { echo "unclear error: $out"; exit 1; }
echo "plot: ok"

#!/usr/bin/env bash
# zotrain against PyTorch (Debian's python3-torch) on the same machine in the same run, for 1 and
# 2 threads: LeNet-5 at batch 256 (BP and two-point ZO steps) and MobileNetV2 at batch 32 (BP, ZO
# with q = 1, ElasticZO) on 1x28x28 and 3x64x64 inputs. Prints one line per model, step and
# thread count with both minima (the machine is shared: medians drift with its load) and the ratio.
#   bench/compare.sh [build dir] [case...]   cases: lenet5 mbv2-0.35-28 mbv2-0.35-64 mbv2-1.0-28
#                                            mbv2-1.0-64 (default all)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BIN="${1:-$ROOT/build}/zotrain"
shift || true
[[ -x "$BIN" ]] || { echo "compare: $BIN not built" >&2; exit 2; }
/usr/bin/python3 -c "import torch" 2>/dev/null ||
  { echo "compare: PyTorch missing: apt-get install python3-torch" >&2; exit 2; }
CASES=("$@")
[[ ${#CASES[@]} -gt 0 ]] || CASES=(lenet5 mbv2-0.35-28 mbv2-0.35-64 mbv2-1.0-28 mbv2-1.0-64)
for c in "${CASES[@]}"; do
  case "$c" in
    lenet5) model=lenet5 input=1,28,28 batch=256 steps=30 methods="bp zo" ;;
    mbv2-*-28) model="mobilenetv2:$(cut -d- -f2 <<<"$c")" input=1,28,28 batch=32 steps=10 methods="bp zo elastic" ;;
    mbv2-*-64) model="mobilenetv2:$(cut -d- -f2 <<<"$c")" input=3,64,64 batch=32 steps=10 methods="bp zo elastic" ;;
    *) echo "compare: unknown case $c" >&2; exit 2 ;;
  esac
  for threads in 1 2; do
    peer="$(/usr/bin/python3 "$ROOT/bench/peers/torch_peer.py" --model "$model" --input "$input" \
      --batch "$batch" --threads "$threads" --steps "$steps")"
    for step in $methods; do
      # Full ZO perturbs every layer each step, as the peer does (--zo-layer-scale dim: the f32
      # defaults until 2026-12-07, since then one layer per step, in turn).
      extra=()
      [[ $step == zo ]] && extra=(--zo-layer-scale dim)
      ours="$("$BIN" bench --json --model "$model" --input "$input" --method "$step" --q 1 \
        --batch "$batch" --threads "$threads" --steps "$steps" --lr 0.01 --zo-lr 1e-4 "${extra[@]}")"
      /usr/bin/python3 - "$model $input" "$batch" "$step" "$threads" "$ours" "$peer" <<'PY'
import json, sys
name, batch, step, threads = sys.argv[1:5]
ours, peer = json.loads(sys.argv[5]), json.loads(sys.argv[6])
z, t = ours["ms_min"], peer[step]["ms_min"]
print(f"{name} batch {batch}, {step} step, {threads} thread(s): zotrain {z:.2f} ms, "
      f"PyTorch {peer['torch']} {t:.2f} ms, PyTorch/zotrain {t / z:.2f}")
PY
    done
  done
done

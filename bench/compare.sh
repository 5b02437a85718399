#!/usr/bin/env bash
# zotrain against PyTorch (Debian's python3-torch) on the same machine in the same run:
# LeNet-5, batch 256, BP step and two-point ZO step, for 1 and 2 threads. Prints one line per
# step and thread count with both medians and the ratio.
#   bench/compare.sh [build dir]
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BIN="${1:-$ROOT/build}/zotrain"
[[ -x "$BIN" ]] || { echo "compare: $BIN not built" >&2; exit 2; }
/usr/bin/python3 -c "import torch" 2>/dev/null ||
  { echo "compare: PyTorch missing: apt-get install python3-torch" >&2; exit 2; }
for threads in 1 2; do
  peer="$(/usr/bin/python3 "$ROOT/bench/peers/lenet5_torch.py" --threads "$threads" --steps 30)"
  for step in bp zo; do
    ours="$("$BIN" bench --json --method "$step" --batch 256 --threads "$threads" --steps 30 --lr 0.01 --zo-lr 1e-4)"
    python3 - "$step" "$threads" "$ours" "$peer" <<'PY'
import json, sys
step, threads, ours, peer = sys.argv[1], sys.argv[2], json.loads(sys.argv[3]), json.loads(sys.argv[4])
z, t = ours["ms_median"], peer[step]["ms_median"]
print(f"LeNet-5 batch 256, {step} step, {threads} thread(s): zotrain {z:.2f} ms, "
      f"PyTorch {peer['torch']} {t:.2f} ms, zotrain {t / z:.2f}x faster")
PY
  done
done

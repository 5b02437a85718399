#!/usr/bin/env bash
# Time per training step against the batch size, LeNet-5 on 1 thread: zotrain's bp, zo
# (Gaussian, Rademacher, paired passes), elastic, INT8* (int8 zo) and int8-npu zo steps, and
# PyTorch's (Debian's python3-torch) BP and MeZO-style ZO steps, in one run on one machine.
# Prints a Markdown table of medians (ms) for docs/benchmarks.md; with --json FILE also writes
# every number, one JSON object per line.
#   bench/batch_sizes.sh [build dir] [--json FILE]
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="$ROOT/build" JSON=""
while (($#)); do
  case "$1" in
    --json) JSON="$2"; shift 2 ;;
    *) BUILD="$1"; shift ;;
  esac
done
BIN="$BUILD/zotrain"
[[ -x "$BIN" ]] || { echo "batch_sizes: $BIN not built" >&2; exit 2; }
torch=1
/usr/bin/python3 -c "import torch" 2>/dev/null || torch=0
[[ -n "$JSON" ]] && : >"$JSON"
# name | flags after the model. The f32 zo steps pin --zo-layer-scale dim: every layer perturbed
# each step, the Full ZO f32 defaults until 2026-12-07 (since then one layer per step, in turn).
ZO="--method zo --zo-layer-scale dim"
STEPS=("bp|--method bp" "zo|$ZO" "zo rademacher|$ZO --perturbation rademacher"
       "zo paired|$ZO --zo-pair-passes 1" "elastic|--method elastic --zo-layer-scale none --bp-layers 2"
       "INT8* zo|--precision int8 --method zo" "int8-npu zo|--precision int8-npu --method zo")
header="| batch |"
for s in "${STEPS[@]}"; do header+=" ${s%%|*} |"; done
((torch)) && header+=" PyTorch BP | PyTorch ZO | PyTorch ZO / zo |"
echo "$header"
echo "$header" | sed -e 's/[^|][^|]*|/---|/g'
for batch in 1 4 16 64 256; do
  steps=$((batch <= 4 ? 300 : batch <= 16 ? 100 : batch <= 64 ? 40 : 20))
  row="| $batch |"
  zo=""
  for s in "${STEPS[@]}"; do
    read -r -a flags <<<"${s#*|}"
    out="$("$BIN" bench --json --model lenet5 --batch "$batch" --threads 1 --q 1 --steps "$steps" \
      "${flags[@]}")"
    ms="$(/usr/bin/python3 -c 'import json,sys; print(json.loads(sys.argv[1])["ms_median"])' "$out")"
    [[ "${s%%|*}" == zo ]] && zo="$ms"
    row+=" $(printf '%.3f' "$ms") |"
    [[ -n "$JSON" ]] && /usr/bin/python3 -c 'import json,sys; d=json.loads(sys.argv[1]); d["step"]=sys.argv[2]; print(json.dumps(d))' "$out" "${s%%|*}" >>"$JSON"
  done
  if ((torch)); then
    peer="$(/usr/bin/python3 "$ROOT/bench/peers/torch_peer.py" --model lenet5 --batch "$batch" \
      --threads 1 --steps "$steps")"
    row+="$(/usr/bin/python3 -c 'import json,sys; p=json.loads(sys.argv[1]); z=float(sys.argv[2]); print(" %.3f | %.3f | %.2f |" % (p["bp"]["ms_median"], p["zo"]["ms_median"], p["zo"]["ms_median"] / z))' "$peer" "$zo")"
    [[ -n "$JSON" ]] && /usr/bin/python3 -c 'import json,sys; p=json.loads(sys.argv[1]); p["batch"]=int(sys.argv[2]); p["step"]="pytorch"; print(json.dumps(p))' "$peer" "$batch" >>"$JSON"
  fi
  echo "$row"
done
((torch)) || echo "(PyTorch missing: apt-get install python3-torch for its columns)"

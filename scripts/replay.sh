#!/usr/bin/env bash
# Replays a fixed set of short trainings, evaluations and memory plans with two zotrain binaries
# and checks that they agree bit for bit: every metrics.jsonl field but the clock and the RSS,
# every `eval` and `memory` output. One case per precision x method x model family, plus the
# options that take other code paths (lanes, frozen layers, cached features, forward
# differences, sparse masks, momentum, q schedules). A restructuring must keep all of them.
#
#   scripts/replay.sh [--base-ref REF | --base-bin PATH] [--new-bin PATH] [--keep-arena 0]
#                     [--only REGEX] [--work DIR]
#
# --base-ref builds REF (default: HEAD, i.e. the last commit) into build-replay/ from a git
# worktree; --new-bin defaults to build/zotrain (the working tree, built by scripts/test.sh).
# --keep-arena 0 leaves arena_bytes out of the comparison (for a change meant to move memory).
# Exit 0 when every case agrees, 1 naming the cases that differ.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BASE_REF=HEAD BASE_BIN="" NEW_BIN="$ROOT/build/zotrain" ONLY="" KEEP_ARENA=1
WORK="${TMPDIR:-/tmp}/zotrain-replay"
while (($#)); do
  case "$1" in
    --base-ref) BASE_REF="$2"; shift 2 ;;
    --base-bin) BASE_BIN="$2"; shift 2 ;;
    --new-bin) NEW_BIN="$2"; shift 2 ;;
    --only) ONLY="$2"; shift 2 ;;
    --work) WORK="$2"; shift 2 ;;
    --keep-arena) KEEP_ARENA="$2"; shift 2 ;;
    *) sed -n '2,15p' "$0" >&2; exit 2 ;;
  esac
done
export ZOTRAIN_DATA="${ZOTRAIN_DATA:-$ROOT/data}"
say() { echo "replay: $*"; }

if [[ -z "$BASE_BIN" ]]; then
  tree="$ROOT/build-replay/src" build="$ROOT/build-replay/build"
  commit="$(git -C "$ROOT" rev-parse "$BASE_REF")"
  if [[ "$(cat "$ROOT/build-replay/commit" 2>/dev/null)" != "$commit" ]]; then
    say "building $BASE_REF ($commit) in $build"
    git -C "$ROOT" worktree remove --force "$tree" 2>/dev/null || rm -rf "$tree"
    git -C "$ROOT" worktree add --detach "$tree" "$commit" >/dev/null
    cmake -S "$tree" -B "$build" -DCMAKE_BUILD_TYPE=Release -DZOTRAIN_BUILD_TESTS=OFF \
      -DZOTRAIN_BUILD_BENCH=OFF >/dev/null
    cmake --build "$build" -j"$(nproc)" --target zotrain_cli >/dev/null
    echo "$commit" >"$ROOT/build-replay/commit"
  fi
  BASE_BIN="$build/zotrain"
fi
[[ -x "$BASE_BIN" && -x "$NEW_BIN" ]] || { say "no binary at $BASE_BIN or $NEW_BIN" >&2; exit 2; }

# name | command after the binary ({out} is the case's output folder, {pre:NAME} a checkpoint of
# an earlier case, which --only must then select too). Short runs on subsets: seconds each.
# The f32 elastic cases pin --ema-decay 0 (elastic f32 evaluates a parameter average by default
# since 2026-12-04), but f32-mobilenetv2-elastic, which covers the average; so do the int8 BP and
# elastic cases (the same default since 2026-12-04, session 17), but int8-pointnet-bn-elastic.
SMALL="--train-limit 1024 --val-size 256 --test-limit 512 --batch 64 --epochs 2"
CASES=(
  "f32-lenet5-bp|train --model lenet5 --data mnist --method bp $SMALL --out {out}"
  "f32-lenet5-zo|train --model lenet5 --data mnist --method zo --q 2 $SMALL --out {out}"
  "f32-lenet5-elastic-lanes|train --model lenet5 --data fashion-mnist --method elastic --ema-decay 0 --zo-layer-scale none --zo-lr 5e-4 --threads 2 --zo-lanes 2 $SMALL --out {out}"
  "f32-lenet5-elastic-forward|train --model lenet5 --data mnist --method elastic --ema-decay 0 --zo-layer-scale none --zo-lr 5e-4 --bp-layers 1 --estimator forward --perturbation rademacher --sparsity 0.5,1:0.8 --zo-momentum 0.9 --zo-update sign $SMALL --out {out}"
  "f32-lenet5-elastic-cleanhead|train --model lenet5 --data mnist --method elastic --ema-decay 0 --zo-layer-scale none --zo-lr 5e-4 --head-grad clean --perturbation uniform --memory-budget 1500000 $SMALL --out {out}"
  "f32-mlp-zo-threads|train --model mlp:64,32 --data mnist --method zo --threads 2 --q 3 $SMALL --out {out}"
  "f32-lenet5-finetune-cached|train --model lenet5 --data mnist --method elastic --ema-decay 0 --zo-layer-scale none --zo-lr 5e-4 --bp-layers 1 --init {pre:f32-lenet5-bp} --train-layers 2 --cache-features 1 $SMALL --out {out}"
  "int8-lenet5-bp|train --model lenet5 --data mnist --precision int8 --method bp --ema-decay 0 $SMALL --out {out}"
  "int8-lenet5-zo|train --model lenet5 --data mnist --precision int8 --method zo --q 2 $SMALL --out {out}"
  "int8-lenet5-elastic-float|train --model lenet5 --data fashion-mnist --precision int8 --method elastic --ema-decay 0 --zo-layer-scale none --zo-sign float --sign-agreement 1 --threads 2 $SMALL --out {out}"
  "int8-lenet5-elastic-frac8|train --model lenet5 --data mnist --precision int8 --method elastic --ema-decay 0 --zo-layer-scale none --bp-layers 1 --loss-frac-bits 8 --int-eps 3 --sparsity 0.5 $SMALL --out {out}"
  "int8-lenet5-init-f32|train --model lenet5 --data mnist --precision int8 --method elastic --ema-decay 0 --zo-layer-scale none --init {pre:f32-lenet5-bp} $SMALL --out {out}"
  "f32-pointnet-elastic|train --model pointnet --data modelnet40-standin --points 128 --method elastic --ema-decay 0 --zo-layer-scale none --zo-lr 5e-4 --threads 2 --train-limit 512 --val-size 128 --batch 32 --epochs 2 --out {out}"
  "f32-pointnet-zo|train --model pointnet --data modelnet40-standin --points 128 --method zo --train-limit 256 --val-size 64 --batch 32 --epochs 1 --out {out}"
  "int8-pointnet-elastic|train --model pointnet:nobn --data modelnet40-standin --points 128 --precision int8 --method elastic --ema-decay 0 --zo-layer-scale none --train-limit 512 --val-size 128 --batch 32 --epochs 2 --out {out}"
  "int8-pointnet-bn-elastic|train --model pointnet --data modelnet40-standin --points 128 --precision int8 --method elastic --bp-layers 3 --int-eps 31 --sparsity 0.5 --bn-stats-batches 4 --threads 2 --train-limit 512 --val-size 128 --batch 32 --epochs 2 --out {out}"
  "f32-mobilenetv2-bp|train --model mobilenetv2:0.35 --data fashion-mnist --method bp --threads 2 --train-limit 512 --val-size 128 --test-limit 256 --batch 32 --epochs 1 --out {out}"
  "f32-mobilenetv2-elastic|train --model mobilenetv2:0.35 --data fashion-mnist --method elastic --zo-layer-scale none --zo-lr 5e-4 --bp-layers 3 --threads 2 --zo-lanes 2 --train-limit 256 --val-size 64 --test-limit 128 --batch 16 --epochs 1 --out {out}"
  "f32-resnet18-bp|train --model resnet18:0.25 --data mnist --method bp --train-limit 256 --val-size 64 --test-limit 128 --batch 32 --epochs 1 --out {out}"
  "f32-resnet18-zo-qsched|train --model resnet18:0.25 --data mnist --method zo --init {pre:f32-resnet18-bp} --train-layers 2 --perturbation rademacher --q-schedule qscheduler --q0 2 --q-patience 1 --q-max 8 --train-limit 256 --val-size 64 --test-limit 128 --batch 32 --epochs 3 --out {out}"
  "npu-mobilenetv2-zo|train --model mobilenetv2:0.35 --data fashion-mnist --precision int8-npu --method zo --init {pre:f32-mobilenetv2-bp} --train-layers 2 --q 2 --zo-momentum 0.5 --threads 2 --train-limit 256 --val-size 64 --test-limit 128 --batch 32 --epochs 2 --out {out}"
  "npu-resnet18-qsched|train --model resnet18:0.25 --data mnist --precision int8-npu --method zo --init {pre:f32-resnet18-bp} --train-layers 3 --q-schedule budget --q0 2 --q-budget 400 --q-patience 1 --npu-calibration-batches 2 --train-limit 256 --val-size 64 --test-limit 128 --batch 32 --epochs 3 --out {out}"
  "npu-lenet5-zo|train --model lenet5 --data mnist --precision int8-npu --method zo --init {pre:f32-lenet5-bp} --q 2 --threads 2 $SMALL --out {out}"
  "npu-lenet5-cached|train --model lenet5 --data mnist --precision int8-npu --method zo --init {pre:f32-lenet5-bp} --train-layers 2 --cache-features 1 --sparsity 0.5 $SMALL --out {out}"
  "eval-f32|eval --checkpoint {pre:f32-lenet5-elastic-lanes} --batch 100"
  "eval-int8|eval --checkpoint {pre:int8-lenet5-elastic-float} --data mnist"
  "memory-f32|memory --model lenet5 --method elastic --ema-decay 0 --zo-layer-scale none --zo-lr 5e-4 --batch 64 --threads 2 --zo-lanes 2"
  "memory-mobilenetv2|memory --model mobilenetv2:0.35 --data fashion-mnist --method zo --train-layers 3 --batch 16"
  "memory-int8|memory --model lenet5 --precision int8 --method elastic --ema-decay 0 --zo-layer-scale none --batch 64"
)

rm -rf "$WORK" && mkdir -p "$WORK"
failed=()
for c in "${CASES[@]}"; do
  name="${c%%|*}" cmd="${c#*|}"
  [[ -n "$ONLY" && ! "$name" =~ $ONLY ]] && continue
  for side in base new; do
    bin="$BASE_BIN"
    [[ $side == new ]] && bin="$NEW_BIN"
    out="$WORK/$side/$name"
    mkdir -p "$out"
    args="${cmd//\{out\}/$out}"
    while [[ "$args" =~ \{pre:([A-Za-z0-9-]+)\} ]]; do
      args="${args//\{pre:${BASH_REMATCH[1]}\}/$WORK/$side/${BASH_REMATCH[1]}/checkpoint.bin}"
    done
    # shellcheck disable=SC2086
    rc=0
    "$bin" $args >"$out/stdout" 2>"$out/stderr" || rc=$?
    echo "$rc" >"$out/exit"
  done
  if python3 - "$WORK/base/$name" "$WORK/new/$name" "$KEEP_ARENA" <<'EOF'; then
import json, os, sys
base, new, keep_arena = sys.argv[1], sys.argv[2], sys.argv[3] == "1"
for d in (base, new):  # a case that fails on both sides is no agreement
    if open(os.path.join(d, "exit")).read().strip() != "0":
        print("  failed:", d, open(os.path.join(d, "stderr")).read().strip()[-500:])
        sys.exit(1)
drop = {"seconds", "peak_rss_bytes"} | (set() if keep_arena else {"arena_bytes"})
def lines(d):
    p = os.path.join(d, "metrics.jsonl")
    if not os.path.exists(p):  # eval and memory: their output, less the paths
        return open(os.path.join(d, "stdout")).read().replace(os.path.dirname(d), "")
    return [{k: v for k, v in json.loads(l).items() if k not in drop} for l in open(p) if l.strip()]
a, b = lines(base), lines(new)
if a != b:
    print("  base:", a if isinstance(a, str) else json.dumps(a)[:2000])
    print("  new: ", b if isinstance(b, str) else json.dumps(b)[:2000])
    sys.exit(1)
EOF
    say "same  $name"
  else
    say "DIFF  $name"
    failed+=("$name")
  fi
done
if ((${#failed[@]})); then
  say "${#failed[@]} case(s) differ: ${failed[*]} (outputs in $WORK)"
  exit 1
fi
say "every case agrees bit for bit ($BASE_BIN against $NEW_BIN)"
